// Fuzz target: an MCAP file someone hands us (pubsub-replay import / info / play FILE.mcap):
// McapReader over the bytes (records, chunks lz4/zstd/none, CRCs), and what the importer reads
// out of them - every ros2msg schema through the .msg reader, every channel's
// offered_qos_profiles through the QoS reader, every ros2idl schema's sections split (their IDL
// goes to libcycloneddsidl's parser, not in the fuzz build). Beyond "no crash": the reader's
// message count is the number of messages it delivered, and nothing it delivers lies outside the
// input's record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "mcap_reader.hpp"
#include "ros2.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Visit : service::replay::detail::McapVisitor {
  uint64_t messages = 0;
  void schema(const service::replay::detail::McapSchema& s) override {
    if (s.encoding == "ros2msg") (void)service::replay::detail::parse_ros2msg(s.name, s.data);
    if (s.encoding == "ros2idl") (void)service::replay::detail::ros2idl_text(s.data);
  }
  void channel(const service::replay::detail::McapChannel& c) override {
    auto q = c.metadata.find("offered_qos_profiles");
    if (q != c.metadata.end()) (void)service::replay::detail::parse_offered_qos(q->second);
    (void)service::replay::detail::dds_topic_from_ros(c.topic, c.topic);
  }
  service::Status message(const service::replay::detail::McapMessage& m) override {
    volatile uint8_t sum = 0;
    for (uint8_t b : m.data) sum = static_cast<uint8_t>(sum + b);  // ASan: inside the buffer
    ++messages;
    return {};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Visit v;
  service::replay::detail::McapReadOptions o;
  o.max_chunk_bytes = 1 << 20;  // a fuzzed length must not ask for a gigabyte
  o.max_record_bytes = 1 << 20;
  auto r = service::replay::detail::McapReader(o).read(in, v);
  if (r) {
    check(r->messages == v.messages);
    check(r->bytes <= size);
  }
  return 0;
}
