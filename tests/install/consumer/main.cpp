// The consumer of the installed package: writes one record with storage::SegmentWriter into a
// fresh temporary directory, reads it back with storage::Recording, prints what it read (the test
// compares the output exactly) and removes the directory; loads the configuration file given as
// its argument (the installed example) with pubsub::config. One call into libpubsub checks that
// pubsub::pubsub links too.
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "config/recorder_config.hpp"
#include "pubsub/transport.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

namespace {

int fail(const char* what, const common::Error& e) {
  std::fprintf(stderr, "%s: %s\n", what, e.to_string().c_str());
  return 1;
}

int write_and_read(const std::string& dir) {
  storage::SegmentWriterOptions options;
  options.fsync = storage::FsyncPolicy::kNone;
  auto writer = storage::SegmentWriter::create(dir, options);
  if (!writer) return fail("SegmentWriter::create", writer.error());
  auto topic = (*writer)->add_topic({"chatter", "std_msgs::msg::String", false, {}, {}});
  if (!topic) return fail("add_topic", topic.error());
  auto id = (*writer)->add_writer({*topic, storage::Guid{1, 2, 3}});
  if (!id) return fail("add_writer", id.error());
  const std::string_view text = "hello from an installed pubsub";
  storage::RecordMeta meta;
  meta.topic = *topic;
  meta.writer = *id;
  meta.sequence = 1;
  meta.source_ns = 1000;
  meta.reception_ns = 2000;
  if (auto s = (*writer)->append(meta, std::as_bytes(std::span(text))); !s) {
    return fail("append", s.error());
  }
  if (auto s = (*writer)->close(); !s) return fail("close", s.error());

  auto recording = storage::Recording::open(dir);
  if (!recording) return fail("Recording::open", recording.error());
  auto cursor = (*recording)->query();
  if (!cursor) return fail("query", cursor.error());
  int records = 0;
  while (const storage::RecordView* r = cursor->next()) {
    ++records;
    std::printf("record topic %u writer %u sequence %lld reception %lld: %.*s\n", r->meta.topic,
                r->meta.writer, static_cast<long long>(r->meta.sequence),
                static_cast<long long>(r->meta.reception_ns), static_cast<int>(r->payload.size()),
                reinterpret_cast<const char*>(r->payload.data()));
  }
  if (!cursor->status()) return fail("next", cursor->status().error());
  std::printf("records %d\n", records);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer RECORDER_JSON\n");
    return 2;
  }
  std::string dir = (std::filesystem::temp_directory_path() / "pubsub-consumer-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const int rc = write_and_read(dir + "/recording");
  std::filesystem::remove_all(dir);
  std::printf("default_batch_message_size(1500) %zu\n", pubsub::default_batch_message_size(1500));
  auto cfg = config::load_recorder_config(argv[1]);
  if (!cfg) {
    std::fputs(cfg.error().to_string().c_str(), stderr);
    return 1;
  }
  std::printf("config domain %u storage.path %s compression %s\n", cfg->domain,
              cfg->storage.path.c_str(),
              std::string(config::to_string(cfg->storage.compression)).c_str());
  return rc;
}
