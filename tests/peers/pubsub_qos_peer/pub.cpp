// pubsub_qos_peer pub: one libpubsub writer (../README.md, "Command line").
//
// Main thread: create the participant and the writer, print "ready", start the status poller
// (status.hpp: matched / incompatible_qos lines), wait for --wait-readers readers (matched and
// acknowledged once: Writer::wait_for_readers), write --count samples at --rate (ids
// round-robin over --keys, seq from 1), print "written", dispose the --dispose ids, unregister
// the other written ids (--unregister-rest), linger, print "done", delete the writer. A signal
// cuts any wait short: after "written" (the number written so far) nothing more is sent.
//
// Every sample goes through Writer::write_serialized with its own encapsulation header (CDR_LE
// or, with --data-representation xcdr2, CDR2_LE; Writer::write would always say CDR_LE) and its
// key hash; a dispose or unregister is the serialized key with status_info 1 or 2, as Cyclone
// DDS sends them. A write that times out (reliable KEEP_ALL history full, max_blocking) is
// retried for up to --timeout seconds, then the run fails (exit 1).
#include <algorithm>

#include "entities.hpp"
#include "roles.hpp"
#include "sample.hpp"
#include "status.hpp"

namespace pubsub_peer {
namespace {

enum class Outcome { kOk, kStopped, kFailed };

struct Pub {
  const Options& o;
  Waker& waker;
  pubsub::Writer& writer;
  int16_t representation = kXcdr1;
  int64_t written = 0;
};

Outcome wait_for_readers(Pub& p) {
  const int32_t n = p.o.wait_readers;
  if (n <= 0) return Outcome::kOk;
  const auto give_up = Clock::now() + seconds(p.o.timeout);
  while (!p.writer.wait_for_readers(static_cast<size_t>(n), std::chrono::milliseconds(50))) {
    if (p.waker.stopped()) return Outcome::kStopped;
    if (Clock::now() >= give_up) {
      err("timeout: " + std::to_string(p.writer.matched_readers()) + " of " + std::to_string(n) +
          " readers matched (and acknowledged) after " + seconds_text(p.o.timeout));
      return Outcome::kFailed;
    }
  }
  return Outcome::kOk;
}

// write_serialized, retried while it times out, up to --timeout; `what` names it in messages.
Outcome publish(Pub& p, const std::vector<std::byte>& payload, const pubsub::WriteOptions& wo,
                const std::string& what) {
  const auto give_up = Clock::now() + seconds(p.o.timeout);
  for (;;) {
    const auto r = p.writer.write_serialized(pubsub::Bytes(payload.data(), payload.size()), wo);
    if (r) return Outcome::kOk;
    const bool timeout = r.error().code == pubsub::ErrorCode::kTimeout;
    if (timeout && p.waker.stopped()) return Outcome::kStopped;
    if (!timeout || Clock::now() >= give_up) {
      err(what + " failed: " + r.error().to_string());
      return Outcome::kFailed;
    }
    // max_blocking_time may be 0: do not spin.
    if (!p.waker.sleep_until(Clock::now() + std::chrono::milliseconds(1))) return Outcome::kStopped;
  }
}

Outcome write_samples(Pub& p) {
  const auto start = Clock::now();
  std::vector<std::byte> payload;
  for (int64_t k = 0; k < p.o.count; ++k) {
    if (p.o.rate > 0 && !p.waker.sleep_until(start + seconds(static_cast<double>(k) / p.o.rate))) {
      return Outcome::kStopped;
    }
    if (p.waker.stopped()) return Outcome::kStopped;
    const auto id = static_cast<int32_t>(k % p.o.keys);
    const auto seq = static_cast<int32_t>(k + 1);
    serialize_sample(id, seq, p.o.size, p.representation, payload);
    const pubsub::KeyHash kh = key_hash_of(id);
    pubsub::WriteOptions wo;
    wo.key_hash = &kh;
    const Outcome r = publish(p, payload, wo,
                              "write of id " + std::to_string(id) + " seq " + std::to_string(seq));
    if (r != Outcome::kOk) return r;
    ++p.written;
  }
  return Outcome::kOk;
}

// A dispose (status_info 1) or an unregister (2) of instance id.
Outcome end_instance(Pub& p, int32_t id, uint32_t status_info) {
  const pubsub::KeyHash kh = key_hash_of(id);
  pubsub::WriteOptions wo;
  wo.key_hash = &kh;
  wo.status_info = status_info;
  return publish(p, serialize_key(id, p.representation), wo,
                 (status_info == 1 ? "dispose of id " : "unregister of id ") + std::to_string(id));
}

// --dispose ids, then (--unregister-rest) every other instance that was written.
Outcome end_instances(Pub& p) {
  for (const int32_t id : p.o.dispose) {
    if (const Outcome r = end_instance(p, id, 1); r != Outcome::kOk) return r;
  }
  if (!p.o.unregister_rest) return Outcome::kOk;
  const int64_t written_ids = std::min<int64_t>(p.o.keys, p.o.count);
  for (int32_t id = 0; id < written_ids; ++id) {
    if (std::find(p.o.dispose.begin(), p.o.dispose.end(), id) != p.o.dispose.end()) continue;
    if (const Outcome r = end_instance(p, id, 2); r != Outcome::kOk) return r;
  }
  return Outcome::kOk;
}

// After "ready": the whole run.
Outcome publish_all(Pub& p) {
  Outcome r = wait_for_readers(p);
  if (r != Outcome::kOk) return r;
  r = write_samples(p);
  emit(Line("written").num("count", p.written));
  if (r != Outcome::kOk) return r;
  r = end_instances(p);
  if (r != Outcome::kOk) return r;
  return p.waker.sleep_until(Clock::now() + seconds(p.o.linger)) ? Outcome::kOk : Outcome::kStopped;
}

int finish(int64_t written, Outcome r) {
  emit_last(Line("done").num("samples", written).flag("ok", r != Outcome::kFailed));
  return r == Outcome::kFailed ? 1 : 0;
}

}  // namespace

int run_pub(const Options& o, Waker& waker) {
  auto participant = create_participant(o);
  if (!participant) return finish(0, Outcome::kFailed);
  auto created = participant->create_writer(topic_description(o), writer_qos(o));
  if (!created) {
    err("cannot create the writer: " + created.error().to_string());
    return finish(0, Outcome::kFailed);
  }
  std::unique_ptr<pubsub::Writer> writer = std::move(created).value();
  emit_ready();
  StatusPoller poller(
      *participant, [&] { return writer->matched_readers(); }, nullptr, waker);
  poller.start();
  Pub p{o, waker, *writer, o.qos.representation.value_or(kXcdr1)};
  const Outcome r = publish_all(p);
  poller.stop();
  return finish(p.written, r);  // the writer, then the participant, go after "done"
}

}  // namespace pubsub_peer
