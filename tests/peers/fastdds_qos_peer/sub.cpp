// fastdds_qos_peer sub: one reader (../README.md, "Command line").
//
// Fast DDS's threads call ReaderEvents: on_data_available takes every sample, prints a "sample"
// line per valid one (payload checked against the pattern) and an "instance" line per change of
// an instance to disposed / no writers ("unregistered"), after that batch's samples; the other
// callbacks print matched / incompatible QoS / deadline missed / liveliness changed lines.
// The main thread creates the entities, prints "ready", and waits: for --count samples (then a
// short drain, so a dispose or unregister written right after the last sample is still reported),
// or with --count 0 until --timeout, or until SIGINT/SIGTERM; then prints "done".
#include <atomic>
#include <map>
#include <vector>

#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>

#include "entities.hpp"
#include "roles.hpp"
#include "sample_type.hpp"

namespace qos_peer {
namespace {

using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::types::ReturnCode_t;
using namespace std::chrono_literals;

// After the --count-th sample: stop once nothing has arrived for kQuiet, at most kDrain later.
constexpr auto kQuiet = 300ms;
constexpr auto kDrain = 1s;

class ReaderEvents : public dds::DataReaderListener {
 public:
  explicit ReaderEvents(Waker& waker) : waker_(waker) {}

  void on_data_available(dds::DataReader* reader) override {
    std::lock_guard lk(mu_);
    if (finished_) return;
    Sample s;
    dds::SampleInfo info;
    std::vector<std::pair<int32_t, dds::InstanceStateKind>> changes;
    while (reader->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
      const int32_t id = info.valid_data ? s.id : id_of(info.instance_handle);
      if (info.valid_data) print_sample(s, info);
      if (note_state(id, info.instance_state)) changes.emplace_back(id, info.instance_state);
    }
    for (const auto& [id, state] : changes) {
      if (state == dds::ALIVE_INSTANCE_STATE) continue;
      const bool disposed = state == dds::NOT_ALIVE_DISPOSED_INSTANCE_STATE;
      emit(Json("instance").num("id", id).text("state", disposed ? "disposed" : "unregistered"));
    }
    events_++;
    waker_.poke();
  }

  void on_subscription_matched(dds::DataReader*, const dds::SubscriptionMatchedStatus& s) override {
    emit(Json("matched").num("current", s.current_count).num("total", s.total_count));
    events_++;
  }
  void on_requested_incompatible_qos(dds::DataReader*,
                                     const dds::RequestedIncompatibleQosStatus& s) override {
    emit(Json("incompatible_qos")
             .text("policy", policy_name(s.last_policy_id))
             .num("total", s.total_count));
  }
  void on_requested_deadline_missed(
      dds::DataReader*, const eprosima::fastrtps::RequestedDeadlineMissedStatus& s) override {
    emit(Json("deadline_missed").num("total", s.total_count));
  }
  void on_liveliness_changed(dds::DataReader*,
                             const eprosima::fastrtps::LivelinessChangedStatus& s) override {
    emit(
        Json("liveliness_changed").num("alive", s.alive_count).num("not_alive", s.not_alive_count));
  }

  // No more sample lines after this (the main thread prints "done" next).
  void finish() {
    std::lock_guard lk(mu_);
    finished_ = true;
  }

  int64_t samples() const { return samples_; }
  int64_t bad_samples() const { return bad_samples_; }
  uint64_t events() const { return events_; }

 private:
  void print_sample(const Sample& s, const dds::SampleInfo& info) {
    const bool ok = payload_matches(s);
    handles_[info.instance_handle] = s.id;
    emit(Json("sample")
             .num("id", s.id)
             .num("seq", s.seq)
             .num("size", static_cast<int64_t>(s.payload.size()))
             .boolean("ok", ok)
             .num("source_ts", info.source_timestamp.to_ns())
             .text("writer", guid_text(info.publication_handle)));
    if (!ok) bad_samples_++;
    samples_++;
  }

  // The id of an instance seen in an invalid sample: as a valid sample had it, else from its
  // key hash.
  int32_t id_of(const InstanceHandle_t& h) const {
    const auto it = handles_.find(h);
    return it != handles_.end() ? it->second : id_of_key_hash(h);
  }

  // True when the instance's state differs from the last one seen.
  bool note_state(int32_t id, dds::InstanceStateKind state) {
    auto [it, inserted] = states_.try_emplace(id, dds::ALIVE_INSTANCE_STATE);
    if (it->second == state) return false;
    it->second = state;
    return true;
  }

  Waker& waker_;
  std::mutex mu_;  // the maps and finished_: data callbacks against finish()
  bool finished_ = false;
  std::map<InstanceHandle_t, int32_t> handles_;
  std::map<int32_t, dds::InstanceStateKind> states_;
  std::atomic<int64_t> samples_{0};
  std::atomic<int64_t> bad_samples_{0};
  std::atomic<uint64_t> events_{0};
};

// After the --count-th sample: until nothing arrives for kQuiet (at most kDrain) or a stop.
void drain(Waker& waker, const ReaderEvents& events) {
  const auto end = Clock::now() + kDrain;
  for (;;) {
    const uint64_t before = events.events();
    const auto wake = std::min(end, Clock::now() + kQuiet);
    if (!waker.sleep_until(wake) || wake >= end || events.events() == before) return;
  }
}

// After "ready": waits, prints "done"; returns the exit status.
int receive(const Options& o, Waker& waker, ReaderEvents& events) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.timeout));
  bool complete = true;
  if (o.count > 0) {
    complete = waker.wait_until(deadline, [&] { return events.samples() >= o.count; });
    if (complete) drain(waker, events);
    // --linger S (cyclone_qos_peer's extension): keep reading S more seconds.
    if (complete && o.sub_linger > 0) {
      waker.sleep_until(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.sub_linger)));
    }
  } else {
    waker.sleep_until(deadline);
  }
  events.finish();
  const bool stopped = waker.stopped();
  const int64_t n = events.samples();
  emit(Json("done").num("samples", n).boolean("ok", events.bad_samples() == 0));
  close_output();
  if (!complete && !stopped) {
    err("timeout: " + std::to_string(n) + " of " + std::to_string(o.count) + " samples");
    return 1;
  }
  if (events.bad_samples() > 0) {
    err(std::to_string(events.bad_samples()) + " samples with a payload not of the pattern");
    return 1;
  }
  return 0;
}

}  // namespace

int run_sub(const Options& o, Waker& waker) {
  ReaderEvents events(waker);  // outlives the participant, which deletes the reader
  Participant p;
  if (!p.create(o)) return 1;
  dds::DataReader* r = p.create_reader(o, &events);
  if (!r) return 1;
  emit(Json("ready"));
  if (r->enable() != ReturnCode_t::RETCODE_OK) {
    err("could not enable the reader");
    return 1;
  }
  return receive(o, waker, events);
}

}  // namespace qos_peer
