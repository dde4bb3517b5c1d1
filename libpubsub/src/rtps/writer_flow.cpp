// StatefulWriter, flow control: the congestion window, and when a HEARTBEAT is due.
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// Runs under the lock on the thread at hand: write() checks the window (have_room_locked()),
// on_acknack() grows it and measures acknowledgement delays, the repairs (writer_repair.cpp) cut
// it; whoever sends a HEARTBEAT books it here.
//
// Flow control: write() waits (up to max_blocking_time) while the history is full or more bytes
// are unacknowledged than the congestion window allows. The window (AIMD, as TCP's) starts at
// kInitialWindow, grows as acknowledgements release history (doubling per window until the
// first loss, then by about one datagram per window, as TCP's congestion avoidance), halves at
// most once per window of data when a reader NACKs samples, or fragments of samples the window
// governs sent in datagrams of the MTU (its socket buffer overflowed) - a reader of big
// datagrams (Fast DDS) takes a fifth off instead - never below two samples of the size lost
// (cut_window_locked(): with room for one, each big sample would wait for the reader to process
// the one before), and never exceeds its cap. A fast reader soon gets the full window; a slow
// one (a small socket buffer: Cyclone's readers keep about 1 MB) settles just under what it can
// hold instead of overflowing it every few windows - each overflow costs a burst of repairs,
// since such a reader may also drop what arrives behind the hole.
//
// The cap is max_unacked_bytes, which covers kAckDelayCovered of acknowledgement delay at
// the line rate. A reader that answers a HEARTBEAT later on purpose (Fast DDS waits its
// heartbeat_response_delay, 5 ms, and then reports all it has) would leave the writer idle most
// of each round: the writer measures each reader's delay from a HEARTBEAT sent while it had
// nothing older unacknowledged to its next ACKNACK, counting only answers that acknowledge more
// than that HEARTBEAT announced - a reader working through a queue, or far away, answers as it
// reaches the HEARTBEAT, and a larger window would only lengthen its queue. A Cyclone DDS reader
// passes that test without holding anything back (it answers from its event thread while its
// receive thread reads on), so its delays are left out (RemoteReaderInfo::queued_answers). The
// cap grows in proportion to the longest delay counted, up to kMaxWindowFactor times
// max_unacked_bytes (window_cap()). So that an answer can show this while data is still going out,
// a HEARTBEAT for the samples before it goes out in the middle of a sample once half a window has
// been sent since the last one.
//
// A writer blocked on a full window repeats its HEARTBEAT every probe_interval() while no
// ACKNACK or NACK_FRAG comes (the HEARTBEAT, the answer or the last fragments - which carry the
// HEARTBEAT_FRAG - were lost), instead of waiting for the periodic one.
//
// HEARTBEATs: one rides on new data once half a window or a quarter of the history's samples went
// out since the last, or when the history has no room left for a datagram's payload
// (heartbeat_due_locked()). A HEARTBEAT announces what has gone out (sent_last_locked(): not the
// open batch, nor a sample still going out run by run). The periodic one goes on while a reliable
// network reader has anything unacknowledged (anything_unacked_locked()). The history's byte ring
// may wrap early only where the window bounds what it holds (update_wrap_ahead_locked()).
//
// State it owns: cwnd_, slowest_ack_, recovery_sn_, had_loss_, heartbeat_count_ and the
// heartbeat-due counters (bytes_since_heartbeat_, samples_since_heartbeat_); of each ReaderProxy,
// the acknowledgement-delay fields (hb_since, hb_clean, hb_last, hb_announced, ack_delay).
#include "rtps/writer.hpp"

#include <algorithm>

#include "rtps/writer_detail.hpp"

namespace pubsub::rtps {
namespace {

constexpr size_t kMinWindow = 16u << 10;
// max_unacked_bytes covers this much acknowledgement delay; a reader answering later raises the
// window's cap in proportion, up to kMaxWindowFactor times (Flow control, above).
constexpr auto kAckDelayCovered = std::chrono::milliseconds(1);
constexpr size_t kMaxWindowFactor = 8;
// A writer blocked on its window repeats its HEARTBEAT after this long without an answer, more
// for readers that answer late on purpose (probe_interval()).
constexpr Duration kMinProbe = std::chrono::milliseconds(2);

}  // namespace

bool StatefulWriter::have_room_locked(size_t size, size_t window) const {
  if (!history_.can_append(size)) return false;
  // Flow control towards reliable readers (a lone oversized sample may always go).
  if (reliable_readers_ > 0 && config_.qos.durability == DurabilityKind::kVolatile &&
      !history_.empty() && history_.bytes_used() + size > window) {
    return false;
  }
  return true;
}

size_t StatefulWriter::window_cap() const {
  const size_t base = config_.max_unacked_bytes;
  const double scale = std::chrono::duration<double>(slowest_ack_) / kAckDelayCovered;
  return std::clamp(static_cast<size_t>(static_cast<double>(base) * scale), base,
                    base * kMaxWindowFactor);
}

// A reader missing data it was sent: treat it as congestion, once per window of data - halve the
// window, or take a fifth off for a reader of big datagrams (Fast DDS: its answers come 5 ms
// late, so the window regrows slowly, and its socket buffer is not the 1 MB of a Cyclone reader,
// which needs the halving).
void StatefulWriter::cut_window_locked(const ReaderProxy& p, SequenceNumber lost,
                                       SequenceNumber sent_last) {
  if (lost <= recovery_sn_ || lost <= p.join_sn) return;
  // Never below two samples of the size lost: one going out while the other is acknowledged.
  // With room for one only, a writer of big samples (a third of max_unacked_bytes at most, or the
  // pacer would have them) would wait a round trip and the reader's whole processing of each.
  // Within the cap: two of the pacer's samples may not fit.
  const CacheChange* c = sample_locked(lost);
  const size_t floor = std::min(window_cap(), std::max<size_t>(kMinWindow, c ? 2 * c->size : 0));
  cwnd_ = std::max(floor, big_datagram_reader(p) ? cwnd_ / 5 * 4 : cwnd_ / 2);
  recovery_sn_ = sent_last;
  had_loss_ = true;
}

void StatefulWriter::ack_delay_locked(ReaderProxy& p, SequenceNumber acked_through,
                                      SteadyTime now) {
  if (p.hb_since == SteadyTime{}) return;
  const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - p.hb_since);
  p.hb_since = {};
  // Only an answer held back by design: one that acknowledges data sent after the HEARTBEAT. A
  // reader working through a queue in its socket buffer answers as it reaches the HEARTBEAT;
  // that delay is its queue's, which a larger window would only lengthen.
  if (!p.hb_clean || d.count() < 0 || acked_through <= p.hb_announced) return;
  p.ack_delay = p.ack_delay.count() == 0 ? d : (3 * p.ack_delay + d) / 4;
  std::chrono::nanoseconds longest{0};
  for (const auto& r : readers_) {
    if (r.network() && r.info.reliable && !r.info.queued_answers) {
      longest = std::max(longest, r.ack_delay);
    }
  }
  if (longest == slowest_ack_) return;
  slowest_ack_ = longest;
  update_wrap_ahead_locked();  // window_cap() follows slowest_ack_
}

// The history may wrap early (history.hpp) only where the flow-control window bounds what it
// takes before its oldest samples are acknowledged: KEEP_ALL, volatile, reliable network
// readers and no same-host readers (whose holds are not windowed).
void StatefulWriter::update_wrap_ahead_locked() {
  const bool windowed = config_.qos.history.kind == HistoryKind::kKeepAll &&
                        config_.qos.durability == DurabilityKind::kVolatile &&
                        reliable_readers_ > 0 && shm_readers_ == 0 && intra_readers_ == 0;
  // The slack covers the rounding of payloads to 8 bytes.
  history_.set_wrap_ahead(windowed ? window_cap() + 4096 : 0);
}

Duration StatefulWriter::probe_interval() const {
  // Twice the slowest reader's deliberate delay (Fast DDS: 5 ms), at least kMinProbe.
  return std::max<Duration>(kMinProbe, 2 * slowest_ack_ + kMinProbe);
}

SequenceNumber StatefulWriter::sent_last_locked() const {
  // A sample still being sent run by run is not announced until its last fragment is out.
  return history_.last_sn() - static_cast<SequenceNumber>(batch_samples_) - (partial_.sn ? 1 : 0);
}

bool StatefulWriter::heartbeat_due_locked() const {
  if (reliable_readers_ == 0) return false;
  const size_t max_samples = history_.max_samples();
  // One per half window: the point where a blocked writer resumes (see write()).
  return bytes_since_heartbeat_ >= cwnd_ / 2 || samples_since_heartbeat_ >= max_samples / 4 ||
         !history_.can_append(max_payload_);
}

// After a fragmented sample: when one is due, and always after a sample of a third of the window
// or more (HEARTBEAT_FRAG alone has a Cyclone reader ask for missing fragments only after its
// NackDelay, 100 ms).
bool StatefulWriter::sample_heartbeat_due_locked(const CacheChange& c) const {
  return paced_size(c.size) || heartbeat_due_locked();
}

SteadyTime StatefulWriter::assert_liveliness_locked(SteadyTime now) {
  const LivelinessQos& l = config_.qos.policies.liveliness;
  if (l.kind != LivelinessKind::kManualByTopic || l.lease_duration >= kInfinite ||
      l.lease_duration <= Duration::zero()) {
    return {};
  }
  const auto period = std::chrono::duration_cast<SteadyTime::duration>(l.lease_duration / 3);
  if (next_liveliness_ == SteadyTime{}) next_liveliness_ = now + period;
  if (now < next_liveliness_) return next_liveliness_;
  next_liveliness_ = now + period;
  if (destinations_.empty()) return next_liveliness_;
  wire::MessageBuilder b(scratch_, sizeof scratch_);
  b.header(local_prefix_);
  const SequenceNumber last = sent_last_locked();
  if (!b.heartbeat(kUnknownReader, config_.guid.entity,
                   std::min(first_available_locked(), last + 1), last, ++heartbeat_count_, true,
                   true)) {
    return next_liveliness_;
  }
  const ConstBuffer part{scratch_, b.size()};
  transport_.send(destinations_, {&part, 1});
  stats_.datagrams_sent += destinations_.size();
  stats_.liveliness_asserted++;
  return next_liveliness_;
}

bool StatefulWriter::put_heartbeat_locked(wire::MessageBuilder& b, const ReaderProxy* directed,
                                          SequenceNumber last, bool due_reset) {
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  if (!b.heartbeat(reader, config_.guid.entity, std::min(first_available_locked(), last + 1), last,
                   ++heartbeat_count_, false)) {
    return false;
  }
  heartbeat_sent_locked(directed, due_reset, last);
  return true;
}

void StatefulWriter::heartbeat_sent_locked(const ReaderProxy* directed, bool due_reset,
                                           SequenceNumber announced) {
  stats_.heartbeats_sent++;
  if (due_reset) {
    bytes_since_heartbeat_ = 0;
    samples_since_heartbeat_ = 0;
  }
  SteadyTime now{};  // read once, and only when a clock starts
  for (auto& r : readers_) {
    if (!r.network() || !r.info.reliable || (directed && &r != directed)) continue;
    if (r.hb_since == SteadyTime{}) {
      if (now == SteadyTime{}) now = std::chrono::steady_clock::now();
      r.hb_since = now;
      r.hb_clean = r.acked >= r.hb_last;
      r.hb_announced = announced;
    }
    r.hb_last = announced;
  }
}

// Network readers only: this decides the periodic HEARTBEATs.
bool StatefulWriter::anything_unacked_locked() const {
  for (const auto& r : readers_) {
    if (r.network() && r.info.reliable && (r.acked < history_.last_sn() || !r.synced)) {
      return true;
    }
  }
  return false;
}

}  // namespace pubsub::rtps
