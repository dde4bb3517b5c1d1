// The writer's packer over the FakeNetwork, watched datagram by datagram through its tap: how
// many samples a batch holds, that no datagram exceeds the message size, that every sample
// travels whole, and that repairs stay within the unfragmented size when batches are larger.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "pubsub/participant.hpp"
#include "pubsub/transport.hpp"
#include "test_util.hpp"
#include "wire/message.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

// What one datagram of the user writer carried.
struct Datagram {
  size_t size = 0;
  std::vector<SequenceNumber> sns;  // DATA submessages, in order
  size_t frags = 0;                 // DATA_FRAG submessages
};

// Every datagram sent that carries user data (not discovery), in send order.
class Tap {
 public:
  void on_datagram(const uint8_t* data, size_t size) {
    struct Collect : wire::Visitor {
      Datagram d;
      void on_data(const wire::ReceiveContext&, const wire::DataSubmessage& m) override {
        if ((m.writer_id.kind() & 0xc0) == 0) d.sns.push_back(m.sn);
      }
      void on_data_frag(const wire::ReceiveContext&, const wire::DataFragSubmessage& m) override {
        if ((m.writer_id.kind() & 0xc0) == 0) ++d.frags;
      }
    } c;
    c.d.size = size;
    const bool ok =
        wire::decode_message(data, size, wire::DecodeLimits{}, c) == wire::DecodeError::kNone;
    std::lock_guard lk(mu_);
    undecodable_ += !ok;
    if (!c.d.sns.empty() || c.d.frags != 0) datagrams_.push_back(std::move(c.d));
  }
  size_t undecodable() {
    std::lock_guard lk(mu_);
    return undecodable_;
  }
  std::vector<Datagram> datagrams() {
    std::lock_guard lk(mu_);
    return datagrams_;
  }

 private:
  std::mutex mu_;
  std::vector<Datagram> datagrams_;
  size_t undecodable_ = 0;
};

// Sample `seq`: pattern bytes with the sequence number in the first four.
std::vector<uint8_t> body(uint32_t seq, size_t size) {
  auto b = test::pattern(seq, size);
  std::memcpy(b.data(), &seq, 4);
  return b;
}

struct Run {
  size_t sample_size;
  size_t count;
  size_t batch_bytes = 8192;
  size_t max_message = 0;  // ParticipantOptions::max_message_size (0: the FakeNetwork's 8972)
  size_t unfragmented = 0;
  double drop = 0;
};

// Publishes `count` samples through a batching writer, checks that all arrive intact and in
// order, and returns the tapped datagrams.
std::vector<Datagram> publish(const Run& r) {
  Tap tap;
  FaultOptions f;
  f.drop = r.drop;
  f.unfragmented_message_size = r.unfragmented;
  f.tap = [&tap](const uint8_t* d, size_t n) { tap.on_datagram(d, n); };
  auto net = FakeNetwork::create(f);
  ParticipantOptions po = test::fake_options(net);
  po.max_message_size = r.max_message;
  auto pub = Participant::create(po);
  auto sub = Participant::create(test::fake_options(net));
  REQUIRE(pub);
  REQUIRE(sub);
  TopicDescription topic{"Batched", "test::Blob", false};
  std::mutex mu;
  std::vector<uint32_t> got;
  size_t bad = 0;
  auto reader = sub.value()->create_reader(topic, ReaderQos{}, [&](const SampleInfo&, Bytes b) {
    uint32_t seq = 0;
    std::memcpy(&seq, b.data(), 4);
    std::lock_guard lk(mu);
    const auto want = body(seq, r.sample_size);
    if (b.size() != want.size() || std::memcmp(b.data(), want.data(), want.size()) != 0) ++bad;
    got.push_back(seq);
  });
  REQUIRE(reader);
  WriterQos wq;
  wq.max_blocking_time = 5s;
  wq.heartbeat_period = 20ms;
  wq.batching.enabled = true;
  wq.batching.max_bytes = r.batch_bytes;
  wq.batching.max_flush_delay = 10s;  // only full batches leave before the final flush()
  auto writer = pub.value()->create_writer(topic, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  for (uint32_t i = 1; i <= r.count; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(body(i, r.sample_size)), {}).ok());
  }
  writer.value()->flush();
  REQUIRE(test::eventually(
      [&] {
        std::lock_guard lk(mu);
        return got.size() >= r.count;
      },
      30s));
  REQUIRE(writer.value()->wait_for_acknowledgments(10s));
  CHECK(tap.undecodable() == 0);
  std::lock_guard lk(mu);
  CHECK(bad == 0);
  REQUIRE(got.size() == r.count);
  for (uint32_t i = 1; i <= r.count; ++i) REQUIRE(got[i - 1] == i);
  return tap.datagrams();
}

}  // namespace

TEST_CASE("Batches of 4096-B samples hold two per datagram, within the message size") {
  // 60 x 4096 B stay inside the writer's initial window: no write waits, so no early flush.
  const auto ds = publish({4096, 60});
  REQUIRE(ds.size() == 30);
  for (const auto& d : ds) {
    CHECK(d.sns.size() == 2);
    CHECK(d.frags == 0);
    CHECK(d.size <= 8972);
  }
}

TEST_CASE("Batches of 2048-B samples hold four per datagram") {
  const auto ds = publish({2048, 120});
  REQUIRE(ds.size() == 30);
  for (const auto& d : ds) {
    CHECK(d.sns.size() == 4);
    CHECK(d.size <= 8972);
  }
}

TEST_CASE("A batch is flushed before its datagram would exceed the message size") {
  // batch_bytes above what fits: the datagram limit decides. 8972 - 64 bytes leave room for
  // two 4096-B samples with their headers, not for three.
  const auto ds = publish({4096, 60, 65000});
  REQUIRE(ds.size() == 30);
  for (const auto& d : ds) {
    CHECK(d.sns.size() == 2);
    CHECK(d.size <= 8972);
  }
}

TEST_CASE("Repairs of large batches stay within the unfragmented size") {
  // 30000-B messages (as over a 9000-MTU link with IP fragmentation allowed): batches of seven
  // 4096-B samples; a lost batch is repaired in datagrams of at most 8972 bytes.
  const auto ds = publish({4096, 2000, 30000, 30000, 8972, 0.05});
  std::set<SequenceNumber> seen;
  size_t largest_new = 0, largest_repair = 0, repairs = 0;
  for (const auto& d : ds) {
    CHECK(d.size <= 30000);
    CHECK(d.frags == 0);
    const bool repair = std::any_of(d.sns.begin(), d.sns.end(),
                                    [&](SequenceNumber sn) { return seen.count(sn) > 0; });
    if (repair) {
      ++repairs;
      largest_repair = std::max(largest_repair, d.size);
    } else {
      largest_new = std::max(largest_new, d.size);
    }
    seen.insert(d.sns.begin(), d.sns.end());
  }
  INFO("datagrams " << ds.size() << ", repairs " << repairs << ", largest new " << largest_new
                    << ", largest repair " << largest_repair);
  CHECK(repairs > 0);
  CHECK(largest_new > 8972);  // batches really were larger than one unfragmented datagram
  CHECK(largest_repair <= 8972);
  CHECK(seen.size() == 2000);
}

TEST_CASE("The default batch datagram is one packet on jumbo frames, ten at MTU 1500") {
  CHECK(default_batch_message_size(9000) == 8972);
  CHECK(default_batch_message_size(8000) == 7972);
  CHECK(default_batch_message_size(1500) == 14792);  // 10 x 1480 B of IP payload - UDP header
  CHECK(default_batch_message_size(1280) == 13808);  // 11 x 1256
  CHECK(default_batch_message_size(4000) == 11920);  // 3 x 3976
  CHECK(default_batch_message_size(65536) == 65000);
  CHECK(default_batch_message_size(100) == 14344);  // an impossible MTU is taken as 576
}
