// pubsub_qos_peer sub: one libpubsub reader (../README.md, "Command line").
//
// libpubsub's receive threads call Subscription::on_sample for every sample, one at a time: a
// sample (status_info 0) is decoded and printed as a "sample" line, its payload checked against
// the pattern; a dispose or unregister (status_info 1 / 2: the body is the serialized key, or
// empty and the key hash names the instance) becomes an "instance" line when it changes the
// instance's state as DDS would: disposed at once, unregistered ("no writers") once every
// writer that wrote the instance has unregistered it. A new sample makes it alive again. When
// the matched writers drop to 0 (StatusPoller, status.hpp), every instance still alive goes
// "unregistered", as a DDS reader's instances go NOT_ALIVE_NO_WRITERS when their writers are
// lost; which writer went when others remain, libpubsub does not say.
//
// The main thread creates the entities, prints "ready", waits for --count samples, then keeps
// reading for --linger seconds (default 0) and until nothing has arrived for 0.3 s (at most 1 s
// more), so a dispose or unregister sent right after the last sample still gets its line; with
// --count 0 it reads until --timeout. Then "done" (samples received, ok = every payload matched).
#include <atomic>
#include <map>
#include <set>

#include "entities.hpp"
#include "roles.hpp"
#include "sample.hpp"
#include "status.hpp"

namespace pubsub_peer {
namespace {

using namespace std::chrono_literals;

constexpr auto kQuiet = 300ms;  // after --count: end once nothing arrived for this long
constexpr auto kDrain = 1s;     // ... but at most this long after --linger

enum class State { kAlive, kDisposed, kUnregistered };

struct Instance {
  State state = State::kAlive;
  std::set<pubsub::Guid> writers;  // writers that wrote it and have not unregistered it
};

class Subscription {
 public:
  explicit Subscription(Waker& waker) : waker_(waker) {}

  // libpubsub's receive thread (one at a time for this reader).
  void on_sample(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    std::lock_guard lk(mu_);
    if (finished_) return;
    if (info.status_info == 0) {
      on_data(info, body);
    } else {
      on_instance_end(info, body);
    }
    last_arrival_ = Clock::now().time_since_epoch().count();
    waker_.poke();
  }

  // The poller's thread, when the matched writers dropped to 0.
  void writers_gone() {
    std::lock_guard lk(mu_);
    if (finished_) return;
    for (auto& [id, in] : instances_) {
      in.writers.clear();
      if (in.state == State::kAlive) change(id, in, State::kUnregistered);
    }
  }

  // Main thread: no more lines from here on.
  void finish() {
    std::lock_guard lk(mu_);
    finished_ = true;
  }

  int64_t samples() const { return samples_; }
  int64_t bad_samples() const { return bad_samples_; }
  Clock::time_point last_arrival() const {
    return Clock::time_point(Clock::duration(last_arrival_.load()));
  }

 private:
  void on_data(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    const auto d = decode_sample(info.encapsulation, body);
    if (!d) {
      err("sample " + std::to_string(info.sequence_number) + " of writer " +
          info.writer.to_string() + " is not a QosTest::Sample (encapsulation " +
          std::to_string(info.encapsulation) + ", " + std::to_string(body.size()) + " bytes)");
      bad_samples_++;
      return;
    }
    emit(Line("sample")
             .num("id", d->id)
             .num("seq", d->seq)
             .num("size", d->size)
             .flag("ok", d->ok)
             .num("source_ts", info.source_timestamp.ns)
             .text("writer", info.writer.to_string()));
    if (!d->ok) bad_samples_++;
    samples_++;
    Instance& in = instances_[d->id];
    in.writers.insert(info.writer);
    in.state = State::kAlive;
  }

  void on_instance_end(const pubsub::SampleInfo& info, pubsub::Bytes body) {
    const auto id = decode_key(info.encapsulation, body, info.key_hash);
    if (!id) {
      err("status_info " + std::to_string(info.status_info) + " of writer " +
          info.writer.to_string() + " names no instance (no key, no key hash)");
      return;
    }
    Instance& in = instances_[*id];
    if (info.status_info & 2u) in.writers.erase(info.writer);
    if (info.status_info & 1u) {
      change(*id, in, State::kDisposed);
    } else if (in.writers.empty() && in.state == State::kAlive) {
      change(*id, in, State::kUnregistered);
    }
  }

  void change(int32_t id, Instance& in, State to) {
    if (in.state == to) return;
    in.state = to;
    emit(Line("instance")
             .num("id", id)
             .text("state", to == State::kDisposed ? "disposed" : "unregistered"));
  }

  Waker& waker_;
  std::mutex mu_;  // the instances and finished_: callbacks, the poller and finish()
  bool finished_ = false;
  std::map<int32_t, Instance> instances_;
  std::atomic<int64_t> samples_{0};
  std::atomic<int64_t> bad_samples_{0};
  std::atomic<Clock::rep> last_arrival_{0};
};

// After the --count-th sample: --linger seconds, then until kQuiet without arrivals (at most
// kDrain more), or a stop.
void settle(const Options& o, Waker& waker, const Subscription& sub) {
  const auto linger_end = Clock::now() + seconds(o.linger);
  const auto hard_end = linger_end + kDrain;
  for (;;) {
    const auto now = Clock::now();
    const auto quiet_end = sub.last_arrival() + kQuiet;
    if (now >= hard_end || (now >= linger_end && now >= quiet_end)) return;
    const auto wake = std::min(hard_end, std::max(linger_end, quiet_end));
    if (!waker.sleep_until(wake)) return;
  }
}

// After "ready": the waits; returns the exit status.
int receive(const Options& o, Waker& waker, Subscription& sub) {
  const auto deadline = Clock::now() + seconds(o.timeout);
  bool complete = true;
  if (o.count > 0) {
    complete = waker.wait_until(deadline, [&] { return sub.samples() >= o.count; });
    if (complete) settle(o, waker, sub);
  } else {
    waker.sleep_until(deadline);
  }
  if (!complete && !waker.stopped()) {
    err("timeout: " + std::to_string(sub.samples()) + " of " + std::to_string(o.count) +
        " samples after " + seconds_text(o.timeout));
    return 1;
  }
  if (sub.bad_samples() > 0) {
    err(std::to_string(sub.bad_samples()) + " samples not of the payload pattern");
    return 1;
  }
  return 0;
}

int finish(Subscription& sub, int status) {
  sub.finish();
  emit_last(Line("done").num("samples", sub.samples()).flag("ok", sub.bad_samples() == 0));
  return status;
}

}  // namespace

int run_sub(const Options& o, Waker& waker) {
  Subscription sub(waker);  // outlives the reader, whose callback it is
  auto participant = create_participant(o);
  if (!participant) return finish(sub, 1);
  auto created = participant->create_reader(
      topic_description(o), reader_qos(o),
      [&sub](const pubsub::SampleInfo& info, pubsub::Bytes body) { sub.on_sample(info, body); });
  if (!created) {
    err("cannot create the reader: " + created.error().to_string());
    return finish(sub, 1);
  }
  std::unique_ptr<pubsub::Reader> reader = std::move(created).value();
  emit_ready();
  StatusPoller poller(
      *participant, [&] { return reader->matched_writers(); },
      [&sub](size_t now) {
        if (now == 0) sub.writers_gone();
      },
      waker);
  poller.start();
  const int status = receive(o, waker, sub);
  poller.stop();
  return finish(sub, status);
}

}  // namespace pubsub_peer
