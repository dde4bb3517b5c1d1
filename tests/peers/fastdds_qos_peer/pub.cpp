// fastdds_qos_peer pub: one writer (../README.md, "Command line").
//
// Main thread: create the entities, print "ready", wait for --wait-readers, write --count
// samples at --rate (ids round-robin over --keys, seq from 1), print "written", dispose the
// --dispose ids, unregister the others (--unregister-rest), wait until the matched readers have
// acknowledged it all (up to --timeout), linger, print "done", delete.
// While it waits it asserts liveliness every --assert-every ms (manual liveliness kinds).
// Fast DDS's threads call WriterEvents, which prints matched / incompatible QoS / deadline
// missed lines.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <thread>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>

#include "entities.hpp"
#include "roles.hpp"
#include "sample_type.hpp"

namespace qos_peer {
namespace {

using eprosima::fastrtps::types::ReturnCode_t;

Clock::duration seconds_of(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The writer's listener: Fast DDS's threads.
class WriterEvents : public dds::DataWriterListener {
 public:
  explicit WriterEvents(Waker& waker) : waker_(waker) {}

  void on_publication_matched(dds::DataWriter*, const dds::PublicationMatchedStatus& s) override {
    emit(Json("matched").num("current", s.current_count).num("total", s.total_count));
    matched_ = s.current_count;
    waker_.poke();
  }
  void on_offered_incompatible_qos(dds::DataWriter*,
                                   const dds::OfferedIncompatibleQosStatus& s) override {
    emit(Json("incompatible_qos")
             .text("policy", policy_name(s.last_policy_id))
             .num("total", s.total_count));
  }
  void on_offered_deadline_missed(dds::DataWriter*,
                                  const dds::OfferedDeadlineMissedStatus& s) override {
    emit(Json("deadline_missed").num("total", s.total_count));
  }

  int32_t matched() const { return matched_; }

 private:
  Waker& waker_;
  std::atomic<int32_t> matched_{0};
};

// Waits until a point in time, asserting liveliness every --assert-every ms meanwhile when the
// writer's liveliness is manual (the participant's or the writer's, per the kind).
class Pacer {
 public:
  Pacer(const Options& o, Waker& waker, dds::DomainParticipant* p, dds::DataWriter* w)
      : waker_(waker), participant_(p), writer_(w) {
    const auto kind = o.qos.liveliness.value_or(dds::AUTOMATIC_LIVELINESS_QOS);
    if (o.assert_every_ms > 0 && kind != dds::AUTOMATIC_LIVELINESS_QOS) {
      every_ = std::chrono::milliseconds(o.assert_every_ms);
      by_participant_ = kind == dds::MANUAL_BY_PARTICIPANT_LIVELINESS_QOS;
      next_assert_ = Clock::now() + every_;
    }
  }

  // False when stopped (SIGINT/SIGTERM) first.
  bool until(Clock::time_point t) {
    for (;;) {
      const bool asserting = every_.count() > 0;
      const Clock::time_point wake = asserting ? std::min(t, next_assert_) : t;
      if (!waker_.sleep_until(wake)) return false;
      const auto now = Clock::now();
      if (asserting && now >= next_assert_) {
        if (by_participant_) {
          participant_->assert_liveliness();
        } else {
          writer_->assert_liveliness();
        }
        next_assert_ += every_;
        if (next_assert_ < now) next_assert_ = now + every_;
      }
      if (now >= t) return true;
    }
  }

 private:
  Waker& waker_;
  dds::DomainParticipant* participant_;
  dds::DataWriter* writer_;
  Clock::duration every_{0};
  bool by_participant_ = false;
  Clock::time_point next_assert_{};
};

enum class Outcome { kOk, kFailed, kStopped };

Outcome wait_for_readers(const Options& o, Waker& waker, const WriterEvents& events) {
  if (o.wait_readers <= 0) return Outcome::kOk;
  const auto deadline = Clock::now() + seconds_of(o.timeout);
  if (waker.wait_until(deadline, [&] { return events.matched() >= o.wait_readers; })) {
    return Outcome::kOk;
  }
  if (waker.stopped()) return Outcome::kStopped;
  err(std::to_string(events.matched()) + " of " + std::to_string(o.wait_readers) +
      " readers matched after " + std::to_string(std::lround(o.timeout)) + " s");
  return Outcome::kFailed;
}

// write(), retried while a full KEEP_ALL history makes it time out, for up to --timeout.
// Fast DDS 2.9 also says TIMEOUT at once when the history has no room for another instance
// (resource limits), hence the pause between tries.
bool write_one(const Options& o, Waker& waker, dds::DataWriter* w, Sample& s) {
  const auto give_up = Clock::now() + seconds_of(o.timeout);
  for (;;) {
    const ReturnCode_t rc = w->write(&s, dds::HANDLE_NIL);  // write(void*) returns bool
    if (rc == ReturnCode_t::RETCODE_OK) return true;
    if (rc != ReturnCode_t::RETCODE_TIMEOUT || Clock::now() > give_up ||
        !waker.sleep_until(Clock::now() + std::chrono::milliseconds(10))) {
      err("write of id " + std::to_string(s.id) + " seq " + std::to_string(s.seq) +
          " failed (return code " + std::to_string(rc()) + ")");
      return false;
    }
  }
}

// Writes --count samples at --rate; `written` counts the successful writes.
Outcome write_samples(const Options& o, Waker& waker, dds::DataWriter* w, Pacer& pacer,
                      int64_t& written) {
  const auto start = Clock::now();
  Sample s;
  for (int64_t i = 0; i < o.count; ++i) {
    if (o.rate > 0 && i > 0 && !pacer.until(start + seconds_of(static_cast<double>(i) / o.rate))) {
      return Outcome::kStopped;
    }
    if (waker.stopped()) return Outcome::kStopped;
    s.id = static_cast<int32_t>(i % o.keys);
    s.seq = static_cast<int32_t>(i + 1);
    fill_payload(s, o.size);
    if (!write_one(o, waker, w, s)) return waker.stopped() ? Outcome::kStopped : Outcome::kFailed;
    ++written;
  }
  return Outcome::kOk;
}

// --dispose ids, then (--unregister-rest) every other instance that was written.
bool dispose_and_unregister(const Options& o, dds::DataWriter* w) {
  bool ok = true;
  Sample key;
  for (const int32_t id : o.dispose) {
    key.id = id;
    const ReturnCode_t rc = w->dispose(&key, dds::HANDLE_NIL);
    if (rc != ReturnCode_t::RETCODE_OK) {
      err("dispose of id " + std::to_string(id) + " failed (return code " + std::to_string(rc()) +
          "; was it written?)");
      ok = false;
    }
  }
  if (!o.unregister_rest) return ok;
  const std::set<int32_t> disposed(o.dispose.begin(), o.dispose.end());
  const int64_t written_ids = std::min<int64_t>(o.keys, o.count);
  for (int32_t id = 0; id < written_ids; ++id) {
    if (disposed.count(id)) continue;
    key.id = id;
    const ReturnCode_t rc = w->unregister_instance(&key, dds::HANDLE_NIL);
    if (rc != ReturnCode_t::RETCODE_OK) {
      err("unregister of id " + std::to_string(id) + " failed (return code " +
          std::to_string(rc()) + ")");
      ok = false;
    }
  }
  return ok;
}

// After "ready": the whole run; returns the exit status.
int publish(const Options& o, Waker& waker, Participant& p, dds::DataWriter* w,
            const WriterEvents& events) {
  Pacer pacer(o, waker, p.get(), w);
  int64_t written = 0;
  auto finish = [&](bool ok, int status) {
    emit(Json("done").num("samples", written).boolean("ok", ok));
    close_output();
    return status;
  };
  Outcome r = wait_for_readers(o, waker, events);
  if (r == Outcome::kOk) r = write_samples(o, waker, w, pacer, written);
  if (r == Outcome::kStopped) return finish(true, 0);
  if (r == Outcome::kFailed) return finish(false, 1);
  emit(Json("written").num("count", written));
  const bool ok = dispose_and_unregister(o, w);
  // A reader that matched us before it knew our writer (its SEDP still in repair) drops what we
  // sent; it asks again once it knows us. Lingering alone can end first (under load): wait until
  // every matched reader has acknowledged everything (best effort: returns at once). Not with
  // a lifespan: Fast DDS 2.9 never counts an expired sample as acknowledged.
  if (!o.qos.lifespan_ms) {
    const auto acked = w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(o.timeout));
    if (acked != ReturnCode_t::RETCODE_OK)
      err("not every matched reader acknowledged within --timeout; lingering all the same");
  }
  pacer.until(Clock::now() + seconds_of(o.linger));  // a stop ends lingering early
  return finish(ok, ok ? 0 : 1);
}

}  // namespace

int run_pub(const Options& o, Waker& waker) {
  WriterEvents events(waker);  // outlives the participant, which deletes the writer
  Participant p;
  if (!p.create(o)) return 1;
  dds::DataWriter* w = p.create_writer(o, &events);
  if (!w) return 1;
  emit(Json("ready"));
  if (w->enable() != ReturnCode_t::RETCODE_OK) {
    err("could not enable the writer");
    return 1;
  }
  return publish(o, waker, p, w, events);
}

}  // namespace qos_peer
