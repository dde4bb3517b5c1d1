// Disk full: a recording on an 8 MiB tmpfs (mounted in a private mount namespace, so nothing
// leaks outside this process) fills up. The writer reports kNoSpace with "No space left on
// device" from append/flush/close and through on_error; the recording stays readable and holds
// every record up to the last complete chunk, byte-identical. Twice: with 64-KiB chunks (through
// the page cache) and with 1-MiB chunks, written with O_DIRECT (this kernel's tmpfs takes it),
// where the failure is a short or refused direct write.
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "crash_common.hpp"
#include "skip.hpp"
#include "storage/recording.hpp"
#include "storage/segment_writer.hpp"

using namespace storage;
namespace fs = std::filesystem;

TEST_CASE("storage: writing into a full filesystem gives a clear error and stays readable") {
  if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0)
    PUBSUB_SKIP("needs root for a private mount namespace");
  REQUIRE(mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0);
  const fs::path mnt = fs::temp_directory_path() / ("storage-full-" + std::to_string(getpid()));
  fs::create_directories(mnt);
  REQUIRE(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=8m") == 0);
  struct Unmount {
    fs::path p;
    ~Unmount() {
      umount2(p.c_str(), MNT_DETACH);
      fs::remove(p);
    }
  } unmount{mnt};
  const std::string dir = (mnt / "rec").string();

  struct Variant {
    uint32_t chunk_bytes;
    uint64_t queue_bytes;
    uint64_t flush_every;
    bool direct;
  };
  const Variant var =
      GENERATE(Variant{64 << 10, 256 << 10, 50, false}, Variant{1 << 20, 4 << 20, 1000, true});
  INFO("chunk_max_bytes " << var.chunk_bytes);
  std::atomic<int> callbacks{0};
  Status reported;
  SegmentWriterOptions o;
  o.chunk_max_bytes = var.chunk_bytes;
  o.segment_max_bytes = 1 << 20;
  if (var.direct) o.segment_max_bytes = 4 << 20;
  o.fsync = FsyncPolicy::kChunk;
  o.queue_max_bytes = var.queue_bytes;
  o.on_error = [&](const Status& s) {
    reported = s;
    ++callbacks;
  };
  uint64_t appended = 0, flushed = 0;
  Status err;
  {
    auto w = SegmentWriter::create(dir, o);
    REQUIRE(w.ok());
    SegmentWriter& wr = **w;
    for (uint32_t t = 1; t <= crash::kTopics; ++t)
      REQUIRE(wr.add_topic({"full/" + std::to_string(t), "F", false, {}, {}}).ok());
    for (uint32_t i = 1; i <= crash::kWriters; ++i)
      REQUIRE(wr.add_writer({crash::topic_of_writer(i), Guid{static_cast<uint8_t>(i)}}).ok());
    Bytes payload;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    // 8 MiB fill up after a few thousand records; bounded by count and time anyway.
    for (uint64_t i = 0; i < 200000 && std::chrono::steady_clock::now() < deadline; ++i) {
      crash::fill_payload(i | 1, payload);  // odd stream indices: incompressible payloads
      RecordMeta m = crash::meta(i);
      err = wr.append(m, payload);
      if (!err) break;
      ++appended;
      if (i % var.flush_every == var.flush_every - 1) {
        err = wr.flush();
        if (!err) break;
        flushed = appended;
      }
    }
    REQUIRE_FALSE(err.ok());
    CHECK(err.error().code == ErrorCode::kNoSpace);
    CHECK_THAT(err.error().message, Catch::Contains("No space left on device"));
    // Sticky: every later call reports the same error.
    CHECK(wr.flush().error().code == ErrorCode::kNoSpace);
    CHECK(wr.append(crash::meta(appended), payload).error().code == ErrorCode::kNoSpace);
    // The large chunks went out with O_DIRECT (the small ones never do).
    if (var.direct) {
      CHECK(wr.stats().direct_chunks > 0);
    } else {
      CHECK(wr.stats().direct_chunks == 0);
    }
    const Status closed = wr.close();
    CHECK(closed.error().code == ErrorCode::kNoSpace);
  }
  CHECK(callbacks == 1);
  CHECK(reported.error().code == ErrorCode::kNoSpace);
  INFO("appended " << appended << ", flushed " << flushed << ": " << err.error().to_string());
  REQUIRE(flushed > 0);

  auto rec = Recording::open(dir);
  REQUIRE(rec.ok());
  auto cur = (*rec)->query();
  REQUIRE(cur.ok());
  uint64_t n = 0;
  Bytes want;
  while (const RecordView* v = cur->next()) {
    INFO("record " << n);
    const RecordMeta m = crash::meta(n);
    REQUIRE(v->meta.writer == m.writer);
    REQUIRE(v->meta.sequence == m.sequence);
    REQUIRE(v->meta.reception_ns == m.reception_ns);
    crash::fill_payload(n | 1, want);
    REQUIRE(v->payload.size() == want.size());
    REQUIRE(std::equal(v->payload.begin(), v->payload.end(), want.begin()));
    ++n;
  }
  CHECK(cur->problems() == 0);
  CHECK(n >= flushed);   // everything flushed before the error is there
  CHECK(n <= appended);  // and nothing that was never accepted
  auto v = (*rec)->verify();
  REQUIRE(v.ok());
  CHECK(v->records == n);
  CHECK(v->chunks_bad == 0);
}
