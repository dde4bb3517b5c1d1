// Same-host delivery, in one process over the FakeNetwork (discovery only): intra-process and
// shared-memory readers keep the reliability and history semantics of network readers
// (KEEP_ALL blocks the writer while a reader refuses, KEEP_LAST drops the oldest), a network
// reader of the same writer still gets everything, loans, and a reader that goes away stops
// holding the writer back.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <vector>

#include "pubsub/participant.hpp"
#include "test_util.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

enum class Path { kIntra, kShm };

ParticipantOptions local_options(const std::shared_ptr<FakeNetwork>& net, Path path) {
  auto o = test::fake_options(net);
  o.intra_process = path == Path::kIntra;
  o.shared_memory = path == Path::kShm;
  return o;
}

std::unique_ptr<Participant> make(const ParticipantOptions& o) {
  auto p = Participant::create(o);
  REQUIRE(p);
  return std::move(p).value();
}

// What a reader received: the first 4 body bytes of each sample (its number) and info.
struct Received {
  std::mutex mu;
  std::vector<uint32_t> seqs;
  std::vector<SequenceNumber> sns;
  std::atomic<bool> refuse{false};
  bool on(const SampleInfo& info, Bytes body) {
    if (refuse) return false;
    uint32_t seq = 0;
    if (body.size() >= 4) std::memcpy(&seq, body.data(), 4);
    std::lock_guard lk(mu);
    seqs.push_back(seq);
    sns.push_back(info.sequence_number);
    return true;
  }
  size_t count() {
    std::lock_guard lk(mu);
    return seqs.size();
  }
  std::vector<uint32_t> get() {
    std::lock_guard lk(mu);
    return seqs;
  }
};

std::vector<uint32_t> iota(uint32_t first, uint32_t last) {
  std::vector<uint32_t> v;
  for (uint32_t i = first; i <= last; ++i) v.push_back(i);
  return v;
}

// A raw reader (it can refuse, as the recorder does) on topic "Local".
std::unique_ptr<RawReader> raw_reader(Participant& p, Received& got) {
  RawReaderListener l;
  l.on_sample = [&got](const RawSample& s) {
    SampleInfo info;
    info.sequence_number = s.sequence_number;
    return got.on(info, s.serialized.subspan(4));  // after the encapsulation header
  };
  auto r = p.create_raw_reader({}, l);
  REQUIRE(r);
  return std::move(r).value();
}

// A publishing and a subscribing participant on one host (one process), on a FakeNetwork for
// discovery, both allowing `path` only.
struct Local {
  std::shared_ptr<FakeNetwork> net = FakeNetwork::create();
  std::unique_ptr<Participant> pub, sub;
  explicit Local(Path path)
      : pub(make(local_options(net, path))), sub(make(local_options(net, path))) {}
};

WriterQos small_keep_all() {
  WriterQos q;
  q.resource_limits.max_samples = 8;
  q.max_blocking_time = 50ms;
  return q;
}

}  // namespace

TEST_CASE("Same host: a refusing reader blocks a KEEP_ALL writer until it resumes") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  Received got;
  got.refuse = true;
  auto reader = raw_reader(*sub, got);
  auto writer = pub->create_writer({"Local", "test::Blob"}, small_keep_all());
  REQUIRE(writer);
  auto& w = *writer.value();
  REQUIRE(w.wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] { return reader->matched_writers() == 1; }));

  for (uint32_t i = 1; i <= 8; ++i) REQUIRE(w.write(test::as_bytes(test::pattern(i, 64))).ok());
  const auto blocked = w.write(test::as_bytes(test::pattern(9, 64)));
  REQUIRE_FALSE(blocked.ok());
  REQUIRE(blocked.error().code == ErrorCode::kTimeout);
  REQUIRE(got.count() == 0);

  got.refuse = false;
  reader->resume();
  REQUIRE(test::eventually([&] { return got.count() == 8; }));
  REQUIRE(w.write(test::as_bytes(test::pattern(9, 64))).ok());
  REQUIRE(test::eventually([&] { return got.count() == 9; }));
  REQUIRE(got.get() == iota(1, 9));
  const auto rs = reader->stats();
  REQUIRE(rs.samples_delivered == 9);
  REQUIRE((path == Path::kIntra ? rs.samples_intra : rs.samples_shm) == 9);
  REQUIRE(rs.refused >= 1);
  REQUIRE(w.wait_for_acknowledgments(5s));
}

TEST_CASE("Same host: a KEEP_LAST writer drops the oldest samples a reader has not taken") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  Received got;
  got.refuse = true;
  auto reader = raw_reader(*sub, got);
  WriterQos q;
  q.history = {HistoryKind::kKeepLast, 2};
  auto writer = pub->create_writer({"Local", "test::Blob"}, q);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] { return reader->matched_writers() == 1; }));
  for (uint32_t i = 1; i <= 5; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 64))).ok());  // never blocks
  }
  got.refuse = false;
  reader->resume();
  REQUIRE(test::eventually([&] { return got.count() == 2; }));
  std::this_thread::sleep_for(50ms);
  REQUIRE(got.get() == std::vector<uint32_t>{4, 5});
  REQUIRE(reader->stats().lost == 3);
}

TEST_CASE("Same host: a network reader of the same writer still gets every sample over RTPS") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  auto net = FakeNetwork::create();
  auto pub = make(local_options(net, path));
  auto local = make(local_options(net, path));
  auto remote = make(test::fake_options(net));  // another host: neither path applies
  Received near, far;
  auto r1 = local->create_reader({"Local", "test::Blob"}, ReaderQos{},
                                 [&](const SampleInfo& i, Bytes b) { near.on(i, b); });
  auto r2 = remote->create_reader({"Local", "test::Blob"}, ReaderQos{},
                                  [&](const SampleInfo& i, Bytes b) { far.on(i, b); });
  REQUIRE(r1);
  REQUIRE(r2);
  WriterQos q;
  q.max_blocking_time = 2s;
  auto writer = pub->create_writer({"Local", "test::Blob"}, q);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(2, 10s));
  for (uint32_t i = 1; i <= 2000; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 200))).ok());
  }
  REQUIRE(writer.value()->wait_for_acknowledgments(10s));
  REQUIRE(test::eventually([&] { return near.count() == 2000 && far.count() == 2000; }));
  REQUIRE(near.get() == iota(1, 2000));
  REQUIRE(far.get() == iota(1, 2000));
  const auto local_stats = r1.value()->stats();
  const auto remote_stats = r2.value()->stats();
  REQUIRE((path == Path::kIntra ? local_stats.samples_intra : local_stats.samples_shm) == 2000);
  REQUIRE(remote_stats.samples_intra + remote_stats.samples_shm == 0);
  REQUIRE(remote_stats.samples_delivered == 2000);
}

TEST_CASE("Same host: a reader that goes away no longer holds the writer back") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  Received got;
  got.refuse = true;
  auto reader = raw_reader(*sub, got);
  auto writer = pub->create_writer({"Local", "test::Blob"}, small_keep_all());
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(test::eventually([&] { return reader->matched_writers() == 1; }));
  for (uint32_t i = 1; i <= 8; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 64))).ok());
  }
  REQUIRE_FALSE(writer.value()->write(test::as_bytes(test::pattern(9, 64))).ok());
  // Destroyed without acknowledging (its participant is still there): the writer must not wait
  // for its lease.
  reader.reset();
  REQUIRE(test::eventually(
      [&] { return writer.value()->write(test::as_bytes(test::pattern(9, 64))).ok(); }, 5s));
}

TEST_CASE("Loans: written in place and received intact, double release and reuse rejected") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  std::mutex mu;
  std::vector<std::vector<uint8_t>> bodies;
  auto reader =
      sub->create_reader({"Loans", "test::Blob"}, ReaderQos{}, [&](const SampleInfo&, Bytes b) {
        std::lock_guard lk(mu);
        auto* p = reinterpret_cast<const uint8_t*>(b.data());
        bodies.emplace_back(p, p + b.size());
      });
  REQUIRE(reader);
  WriterQos q;
  q.max_blocking_time = 30ms;
  auto writer = pub->create_writer({"Loans", "test::Blob"}, q);
  REQUIRE(writer);
  auto& w = *writer.value();
  REQUIRE(w.wait_for_readers(1, 10s));

  // Sizes that need padding to 4 bytes, and one of 1 MiB.
  const std::vector<size_t> sizes = {1, 7, 64, 1u << 20};
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto loan = w.loan(sizes[i]);
    REQUIRE(loan);
    REQUIRE(loan->size() == sizes[i]);
    const auto expect = test::pattern(static_cast<uint32_t>(i + 1), sizes[i]);
    std::memcpy(loan->data().data(), expect.data(), expect.size());
    REQUIRE(w.write(std::move(loan).value()).ok());
    REQUIRE(test::eventually([&] {
      std::lock_guard lk(mu);
      return bodies.size() == i + 1;
    }));
    std::lock_guard lk(mu);
    REQUIRE(bodies.back() == expect);
  }

  // One loan at a time: a second one waits, then times out; writes wait too.
  auto first = w.loan(16);
  REQUIRE(first);
  auto second = w.loan(16);
  REQUIRE_FALSE(second.ok());
  REQUIRE(second.error().code == ErrorCode::kTimeout);
  REQUIRE(w.write(test::as_bytes(test::pattern(9, 16))).error().code == ErrorCode::kTimeout);

  // Released: nothing is published, a second release and a write of it are rejected.
  REQUIRE(first->release().ok());
  REQUIRE(first->release().error().code == ErrorCode::kInvalidArgument);
  REQUIRE(w.write(std::move(first).value()).error().code == ErrorCode::kInvalidArgument);
  // The destructor gives an unwritten loan back: the next one is granted at once.
  { auto dropped = w.loan(16); }
  auto third = w.loan(16);
  REQUIRE(third);
  REQUIRE(w.write(std::move(third).value()).ok());
  REQUIRE(test::eventually([&] {
    std::lock_guard lk(mu);
    return bodies.size() == sizes.size() + 1;
  }));
  std::this_thread::sleep_for(50ms);
  size_t received;
  {
    std::lock_guard lk(mu);  // no call into the library with it held: the listener takes it
    received = bodies.size();
  }
  REQUIRE(received == sizes.size() + 1);
  REQUIRE(w.stats().samples_written == sizes.size() + 1);
}

TEST_CASE("Intra-process delivery is off for participants that ask so: they use the network") {
  auto net = FakeNetwork::create();
  auto o = test::fake_options(net);  // intra_process and shared_memory off
  auto pub = make(o);
  auto sub = make(o);
  Received got;
  auto reader = sub->create_reader({"Net", "test::Blob"}, ReaderQos{},
                                   [&](const SampleInfo& i, Bytes b) { got.on(i, b); });
  REQUIRE(reader);
  auto writer = pub->create_writer({"Net", "test::Blob"});
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  for (uint32_t i = 1; i <= 10; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 64))).ok());
  }
  REQUIRE(test::eventually([&] { return got.count() == 10; }));
  const auto rs = reader.value()->stats();
  REQUIRE(rs.samples_intra + rs.samples_shm == 0);
  REQUIRE(net->stats().delivered > 10);
}

namespace {

// A loaning reader's listener that keeps every sample until told to let go.
struct Kept {
  std::mutex mu;
  std::vector<LoanedSample> samples;
  void on(LoanedSample s) {
    std::lock_guard lk(mu);
    samples.push_back(std::move(s));
  }
  size_t count() {
    std::lock_guard lk(mu);
    return samples.size();
  }
  // The samples kept so far, to look at and release without the lock (releasing calls into
  // the writer, which may be delivering to on() with its own lock held).
  std::vector<LoanedSample> take() {
    std::lock_guard lk(mu);
    return std::move(samples);
  }
};

uint32_t seq_of(const LoanedSample& s) {
  uint32_t v = 0;
  std::memcpy(&v, s.body().data(), 4);
  return v;
}

}  // namespace

TEST_CASE("Reader loans: held samples are intact and hold the writer back until released") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  Kept kept;
  auto reader = sub->create_loaning_reader({"Held", "test::Blob"}, ReaderQos{},
                                           [&](LoanedSample s) { kept.on(std::move(s)); });
  REQUIRE(reader);
  auto writer = pub->create_writer({"Held", "test::Blob"}, small_keep_all());
  REQUIRE(writer);
  auto& w = *writer.value();
  REQUIRE(w.wait_for_readers(1, 10s));
  for (uint32_t i = 1; i <= 8; ++i) REQUIRE(w.write(test::as_bytes(test::pattern(i, 256))).ok());
  REQUIRE(test::eventually([&] { return kept.count() == 8; }));
  // All delivered, none released: the history is full of samples on loan.
  REQUIRE(w.write(test::as_bytes(test::pattern(9, 256))).error().code == ErrorCode::kTimeout);
  auto held = kept.take();
  REQUIRE(held.size() == 8);
  for (uint32_t i = 0; i < 8; ++i) {
    REQUIRE(held[i].valid());
    REQUIRE(held[i].zero_copy());
    const auto expect = test::pattern(i + 1, 256);
    REQUIRE(std::memcmp(held[i].body().data(), expect.data(), 256) == 0);
  }
  REQUIRE(held[0].release().ok());
  REQUIRE(held[0].release().error().code == ErrorCode::kInvalidArgument);
  REQUIRE_FALSE(held[0].valid());
  // One released (the oldest): room for one more.
  REQUIRE(test::eventually([&] { return w.write(test::as_bytes(test::pattern(9, 256))).ok(); }));
  REQUIRE(w.write(test::as_bytes(test::pattern(10, 256))).error().code == ErrorCode::kTimeout);
  auto more = kept.take();
  REQUIRE(more.size() == 1);
  REQUIRE(seq_of(more[0]) == 9);
  held.clear();  // the destructors release the rest
  more.clear();
  REQUIRE(test::eventually([&] { return w.write(test::as_bytes(test::pattern(10, 256))).ok(); }));
  REQUIRE(test::eventually([&] { return kept.count() == 1; }));
  auto last = kept.take();
  REQUIRE(seq_of(last[0]) == 10);
  REQUIRE(w.wait_for_acknowledgments(1s) == false);  // 10 is still held
  last.clear();
  REQUIRE(w.wait_for_acknowledgments(5s));
}

TEST_CASE("Reader loans: a KEEP_LAST writer never overwrites a sample a reader holds") {
  const Path path = GENERATE(Path::kIntra, Path::kShm);
  INFO((path == Path::kIntra ? "intra-process" : "shared memory"));
  Local env(path);
  auto& pub = env.pub;
  auto& sub = env.sub;
  Kept kept;
  auto reader = sub->create_loaning_reader({"HeldLast", "test::Blob"}, ReaderQos{},
                                           [&](LoanedSample s) { kept.on(std::move(s)); });
  REQUIRE(reader);
  WriterQos q;
  q.history = {HistoryKind::kKeepLast, 2};
  q.max_blocking_time = 50ms;
  auto writer = pub->create_writer({"HeldLast", "test::Blob"}, q);
  REQUIRE(writer);
  auto& w = *writer.value();
  REQUIRE(w.wait_for_readers(1, 10s));
  REQUIRE(w.write(test::as_bytes(test::pattern(1, 128))).ok());
  REQUIRE(w.write(test::as_bytes(test::pattern(2, 128))).ok());
  REQUIRE(test::eventually([&] { return kept.count() == 2; }));
  // A third sample would drop the first, which is on loan: the write waits, then gives up.
  REQUIRE(w.write(test::as_bytes(test::pattern(3, 128))).error().code == ErrorCode::kTimeout);
  auto held = kept.take();
  REQUIRE(held.size() == 2);
  const auto first = test::pattern(1, 128);
  REQUIRE(std::memcmp(held[0].body().data(), first.data(), 128) == 0);
  REQUIRE(held[0].release().ok());
  REQUIRE(test::eventually([&] { return w.write(test::as_bytes(test::pattern(3, 128))).ok(); }));
}

TEST_CASE("Reader loans from the network own a copy that outlives the datagram") {
  auto net = FakeNetwork::create();
  auto pub = make(test::fake_options(net));
  auto sub = make(test::fake_options(net));
  Kept kept;
  auto reader = sub->create_loaning_reader({"HeldNet", "test::Blob"}, ReaderQos{},
                                           [&](LoanedSample s) { kept.on(std::move(s)); });
  REQUIRE(reader);
  auto writer = pub->create_writer({"HeldNet", "test::Blob"});
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  for (uint32_t i = 1; i <= 50; ++i) {
    REQUIRE(writer.value()->write(test::as_bytes(test::pattern(i, 300))).ok());
  }
  REQUIRE(test::eventually([&] { return kept.count() == 50; }));
  const auto held = kept.take();
  for (uint32_t i = 0; i < 50; ++i) {
    REQUIRE_FALSE(held[i].zero_copy());
    const auto expect = test::pattern(i + 1, 300);
    REQUIRE(std::memcmp(held[i].body().data(), expect.data(), 300) == 0);
    REQUIRE(held[i].info().sequence_number == i + 1);
  }
  REQUIRE(sub->create_loaning_reader({"X", "Y"}, ReaderQos{}, nullptr).error().code ==
          ErrorCode::kInvalidArgument);
}
