// StatefulWriter, repair: answering ACKNACKs and NACK_FRAGs, pacing, repairs in big datagrams.
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// on_acknack()/on_nack_frag() run on the transport's receive thread: they advance the reader
// proxy, answer NACKs with retransmissions or GAPs (directed with INFO_DST), release history that
// every reliable reader has acknowledged, grow the window and wake blocked writers. A loss cuts
// the window (writer_flow.cpp). NACKs for samples repaired within kRepairHoldoff are for copies
// still on their way, and are not answered again; one request gets at most a congestion window
// of repairs (retransmit_locked()), the rest is asked for again at the next HEARTBEAT.
//
// A sample max_unacked_bytes holds fewer than three of leaves as one burst of DATA_FRAGs, which
// the window cannot spread (nor one grown for a late answerer, which holds more bursts), and ends
// with a HEARTBEAT (HEARTBEAT_FRAG alone has a Cyclone reader ask only after its NackDelay,
// 100 ms). Once a reader has lost such a sample's fragments the Pacer spreads them at an adapting
// rate (the writing thread waits its turn with the lock released), so a reader with a small
// socket buffer is not overrun again by the next one. Smaller samples are left to the window. A
// reader that loses nothing is never paced. A NACK_FRAG is answered in full: while pacing, one
// run at once and the rest at the pacer's rate, before any new data (the writing thread sends it
// when it is writing, the event thread's on_timer() otherwise); the HEARTBEAT comes with the last
// run only. A Cyclone reader asks again for fragments that overlap its previous request only after
// its NackDelay, so a request answered in part, or a HEARTBEAT before the answer is complete,
// costs 100 ms.
//
// Big datagrams (writer.cpp, Datagram size): a reader that keeps missing a repaired sample is on
// a lossy path, where IP-fragmented datagrams rarely arrive whole, and gets the transport's size
// from then on; repairs of a sample in big datagrams that a reader keeps missing back off
// (big_repair_due_locked()).
//
// State it owns: pacer_recovery_sn_, answers_ (which a blocked write() watches), send_buf_ and
// repair_message_ (the repairs' datagrams); pacer_, shared with writer_transmit.cpp, which
// spends its credit on new data; of each ReaderProxy, acked (from ACKNACKs), synced, the
// ACKNACK/NACK_FRAG counts, repaired_hi/repaired_at, frag_repair and big_repairs.
#include "rtps/writer.hpp"

#include <algorithm>

#include "rtps/writer_detail.hpp"

namespace pubsub::rtps {
namespace {

// A reader that asks again for samples repaired less than this long ago has not seen the repair
// yet (a reader answering every HEARTBEAT, as Cyclone's does, asks several times per round
// trip): those are not sent again until the holdoff has passed.
constexpr auto kRepairHoldoff = std::chrono::milliseconds(2);
// big_repair_due_locked(): how often a reader may ask again for one sample in big datagrams after
// its repair had time to arrive before it gets small ones. Once would be safer on a lossy path
// but sends a saturated Fast DDS reader on a clean one (whose socket buffer drops repairs too)
// to small datagrams in most runs from 1 MiB up (perf/RESULTS.md, "Big datagrams through loss").
constexpr uint32_t kBigRelostMax = 2;
// big_repair_due_locked(): the longest a re-lost sample in big datagrams waits for its next repair.
constexpr auto kBigRepairBackoffMax = std::chrono::milliseconds(500);

}  // namespace

void StatefulWriter::on_acknack(const GuidPrefix& source, const wire::AckNackSubmessage& m,
                                SteadyTime now) {
  std::lock_guard lk(mu_);
  ReaderProxy* p = find_locked(Guid{source, m.reader_id});
  if (!p || !p->info.reliable) return;
  stats_.acknacks_received++;
  answers_++;
  if (!p->network()) {
    // A reader we meant to serve locally talks RTPS to us: it could not (or chose not to)
    // read from shared memory or in-process. Serve it over the network from now on.
    p->info.delivery = Delivery::kNetwork;
    p->info.local.reset();
    p->info.doorbell.reset();
    p->gone = false;
    recompute_destinations_locked();
  }
  if (p->has_count && static_cast<int32_t>(m.count - p->last_acknack_count) <= 0) return;
  p->has_count = true;
  p->last_acknack_count = m.count;
  ack_delay_locked(*p, m.set.base - 1, now);
  const bool first_ack = !p->synced;
  p->synced = true;
  const SequenceNumber sent_last = sent_last_locked();
  const SequenceNumber acked = std::min<SequenceNumber>(m.set.base - 1, sent_last);
  if (acked > p->acked) p->acked = acked;
  SequenceNumber nacks[256];
  size_t n = 0;
  const SequenceNumber in_flight = now - p->repaired_at < kRepairHoldoff ? p->repaired_hi : 0;
  for (uint32_t i = 0; i < m.set.num_bits; ++i) {
    const SequenceNumber sn = m.set.base + i;
    if (sn > sent_last) break;
    if (m.set.test(i) && sn > in_flight) nacks[n++] = sn;
  }
  if (n > 0) {
    cut_window_locked(*p, nacks[0], sent_last);
    for (size_t i = 0; i < n; ++i) {  // a sample the pacer spreads was lost: pace
      const CacheChange* c = sample_locked(nacks[i]);
      if (c && paced_size(c->size) && nacks[i] > p->join_sn) {
        pace_after_loss_locked(nacks[i], now);
        break;
      }
    }
    if (const SequenceNumber hi = retransmit_locked(*p, {nacks, n}, now)) {
      p->repaired_hi = hi;
      p->repaired_at = now;
    }
  } else if (first_ack || (m.set.base == 1 && m.set.num_bits == 0 && !m.final)) {
    send_heartbeat_locked(reader_locators(*p), p);
  }
  const size_t before = history_.bytes_used();
  release_acked_locked();
  const size_t released = before - history_.bytes_used();
  if (released) {
    // After a loss, additive increase: one full datagram per window's worth of acknowledgements.
    const size_t grow =
        had_loss_ ? std::max<size_t>(1, released * send_buf_.size() / std::max<size_t>(cwnd_, 1))
                  : released;
    cwnd_ = std::min(window_cap(), cwnd_ + grow);
    pacer_.on_acked(released, now);
  }
  notify_locked();
}

SteadyTime StatefulWriter::on_nack_frag(const GuidPrefix& source, const wire::NackFragSubmessage& m,
                                        SteadyTime now) {
  std::lock_guard lk(mu_);
  ReaderProxy* p = find_locked(Guid{source, m.reader_id});
  if (!p || !p->info.reliable) return {};
  if (p->has_nackfrag_count && static_cast<int32_t>(m.count - p->last_nackfrag_count) <= 0) {
    return {};
  }
  p->has_nackfrag_count = true;
  answers_++;
  p->last_nackfrag_count = m.count;
  const CacheChange* c = sample_locked(m.sn);
  if (!c || (!p->info.durable && m.sn <= p->join_sn)) {
    const SequenceNumber sn = m.sn;
    retransmit_locked(*p, {&sn, 1}, now);  // becomes a GAP
    return {};
  }
  if (in_big_datagrams(*c) && !big_repair_due_locked(*p, m.sn, now)) {
    return {};
  }
  // Fragments of a sample the window cannot pace went missing: the pacer takes over (pacer.hpp);
  // of one it governs, in datagrams of the MTU, the window shrinks as for a whole sample lost (a
  // burst overran the reader's socket buffer). Not in big datagrams: a Fast DDS reader loses one
  // now and then however small the window, and cutting for those cost it about a tenth of its
  // rate at 1 MiB (perf/RESULTS.md, "1 MiB into Cyclone readers").
  if (paced_size(c->size)) {
    pace_after_loss_locked(m.sn, now);
  } else if (!in_big_datagrams(*c)) {
    cut_window_locked(*p, m.sn, sent_last_locked());
  }
  // Every fragment asked for goes out (a newer request replaces what is left of an older one):
  // what the pacer lets go now, at least a run, and the rest at its rate (continue_repairs_locked)
  // - before any new data.
  p->frag_repair = {m.sn, m.fragments, 0};
  const size_t run = size_t{kFragmentBatch} * fragment_size(*c);
  const size_t budget = pacer_.active() ? std::max(pacer_.available(now), run) : SIZE_MAX;
  return send_frag_repair_locked(*p, *c, budget, now);
}

SequenceNumber StatefulWriter::retransmit_locked(ReaderProxy& p,
                                                 std::span<const SequenceNumber> sns,
                                                 SteadyTime now) {
  const auto to = reader_locators(p);
  if (to.empty()) return 0;
  SequenceNumber highest = 0;
  wire::MessageBuilder b(send_buf_.data(), repair_message_);
  auto start = [&] {
    b.truncate(0);
    b.header(local_prefix_);
    b.info_dst(p.info.guid.prefix);
  };
  auto send = [&] {
    if (b.size() <= wire::kHeaderSize + 16) return;
    const ConstBuffer part{send_buf_.data(), b.size()};
    transport_.send(to, {&part, 1});
    stats_.datagrams_sent += to.size();
    start();
  };
  start();
  const EntityId reader = p.info.guid.entity;
  // Irrelevant sequence numbers go out as GAPs, one per run.
  SequenceNumber gap_begin = 0, gap_end = 0;
  auto flush_gap = [&] {
    if (!gap_begin) return;
    wire::NumberSet list;
    list.base = gap_end + 1;
    if (!b.gap(reader, config_.guid.entity, gap_begin, list)) {
      send();
      b.gap(reader, config_.guid.entity, gap_begin, list);
    }
    stats_.gaps_sent++;
    gap_begin = gap_end = 0;
  };
  // At most one congestion window of repair per request: what is left is asked for again at
  // the next heartbeat, instead of overrunning a receiver that is already losing data.
  size_t budget = cwnd_;
  for (SequenceNumber sn : sns) {
    const CacheChange* c = sample_locked(sn);
    const bool irrelevant = !c || (!p.info.durable && sn <= p.join_sn);
    if (!irrelevant && budget == 0) continue;
    highest = sn;
    if (irrelevant) {
      if (gap_begin && sn == gap_end + 1) {
        gap_end = sn;
      } else {
        flush_gap();
        gap_begin = gap_end = sn;
      }
      continue;
    }
    flush_gap();
    if (in_big_datagrams(*c) && !big_repair_due_locked(p, sn, now)) continue;
    stats_.samples_retransmitted++;
    budget -= std::min<size_t>(budget, c->size);
    if (c->size > c->max_payload) {
      send();
      send_fragments_locked(*c, to, &p, 1, fragment_count(*c), false);
      continue;
    }
    if (c->size + kDatagramOverhead > repair_message_) {  // a big datagram: gathered, not copied
      send();
      send_whole_locked(*c, to, &p, false);
      continue;
    }
    const auto qos = inline_qos(*c);
    const size_t need = 12 + 24 + (qos.empty() ? 0 : qos.encoded_size()) + c->size + 3;
    if (b.remaining() < need + 32) send();
    b.info_ts(c->timestamp);
    b.data(reader, config_.guid.entity, c->sn, qos, payload(*c), c->size, nullptr, 0,
           c->status_info != 0 && c->size > 0);
  }
  flush_gap();
  if (b.remaining() < 32) send();
  put_heartbeat_locked(b, &p, sent_last_locked(), false);
  send();
  return highest;
}

SteadyTime StatefulWriter::continue_repairs_locked(SteadyTime now) {
  SteadyTime next{};
  for (auto& r : readers_) {
    if (!r.frag_repair.sn) continue;
    const SteadyTime again = continue_frag_repair_locked(r, now);
    if (again != SteadyTime{} && (next == SteadyTime{} || again < next)) next = again;
  }
  return next;
}

SteadyTime StatefulWriter::continue_frag_repair_locked(ReaderProxy& p, SteadyTime now) {
  const CacheChange* c = sample_locked(p.frag_repair.sn);
  if (!c) {
    p.frag_repair.sn = 0;  // acknowledged meanwhile (or gone): nothing left to repair
    return {};
  }
  // Wait for the pacer's credit for a run (or what is left, if less).
  const size_t run =
      size_t{fragment_size(*c)} * std::min<size_t>(kFragmentBatch / 2, frag_repair_left(p, *c));
  const auto wait = pacer_.until_available(run, now);
  if (wait > Duration::zero()) return now + wait;
  return send_frag_repair_locked(p, *c, pacer_.available(now), now);
}

uint32_t StatefulWriter::frag_repair_end(const ReaderProxy& p, const CacheChange& c) const {
  const auto& r = p.frag_repair;
  const uint32_t total = fragment_count(c);
  uint32_t end = r.frags.num_bits;
  while (end > r.next && !(r.frags.test(end - 1) && r.frags.base + end - 1 <= total)) --end;
  return end;
}

size_t StatefulWriter::frag_repair_left(const ReaderProxy& p, const CacheChange& c) const {
  size_t n = 0;
  const uint32_t end = frag_repair_end(p, c);
  for (uint32_t i = p.frag_repair.next; i < end; ++i) n += p.frag_repair.frags.test(i);
  return n;
}

// Sends up to `budget` bytes (at least one fragment) of p's pending fragment repair, run by
// run, from its cursor. The request's last run ends with HEARTBEAT_FRAG + HEARTBEAT, so that the
// reader asks for whatever is still missing right away - only then: a Cyclone reader asks again
// for fragments overlapping its previous request only after its NackDelay (100 ms), so a
// HEARTBEAT before all of them went out would only cost that. Returns when to go on (epoch:
// done).
SteadyTime StatefulWriter::send_frag_repair_locked(ReaderProxy& p, const CacheChange& c,
                                                   size_t budget, SteadyTime now) {
  auto& r = p.frag_repair;
  const auto to = reader_locators(p);
  const uint32_t frag_size = fragment_size(c);
  const uint32_t end = frag_repair_end(p, c);
  const uint32_t base = static_cast<uint32_t>(r.frags.base);
  size_t left = std::max<size_t>(1, budget / frag_size);
  size_t sent = 0;
  uint32_t i = r.next;
  while (i < end && left > 0) {
    if (!r.frags.test(i) || base + i < 1) {
      ++i;
      continue;
    }
    uint32_t j = i;  // the run [i, j]
    --left;
    while (left > 0 && j + 1 < end && r.frags.test(j + 1)) {
      ++j;
      --left;
    }
    send_fragments_locked(c, to, &p, base + i, base + j, j + 1 == end);
    sent += j - i + 1;
    i = j + 1;
  }
  r.next = i;
  stats_.fragments_retransmitted += sent;
  // What was repaired delays new data (repairs do not wait themselves).
  (void)pacer_.reserve(sent * frag_size, now);
  if (i < end && !to.empty()) return now + pacer_.until_available(frag_size, now);
  r.sn = 0;
  return {};
}

// One rate decrease per loss episode: a loss of data sent before the previous decrease (the same
// sample asked for again, say) is the same episode.
void StatefulWriter::pace_after_loss_locked(SequenceNumber lost, SteadyTime now) {
  if (lost <= pacer_recovery_sn_) return;
  pacer_.on_loss(now);
  pacer_recovery_sn_ = history_.last_sn();
  stats_.pacing_cuts++;
}

bool StatefulWriter::in_big_datagrams(const CacheChange& c) const {
  return c.size > transport_payload() && c.max_payload > transport_payload();
}

// Datagrams above the MTU are sent as IP fragments: one lost packet loses the whole datagram,
// and the incomplete ones fill the reader's reassembly memory until they time out (30 s), so that
// on a lossy path (5 % packet loss) nearly nothing gets through - Fast DDS's own pairs stall so.
// A reader overrunning its socket buffer loses big datagrams too, but their repairs arrive: a
// reader that still misses one sample after kBigRelostMax of its repairs had time to arrive gets
// datagrams of the transport's size from then on (samples already written keep their fragments).
// Returns whether to repair sn now: a sample asked for again is repaired again only after a
// holdoff that doubles with each repair lost (kBigRepairBackoffMax at most). Answering every
// request (a Fast DDS reader asks at each HEARTBEAT) sent each missing fragment about a hundred
// times a second; each copy that loses a packet leaves an incomplete datagram behind, so the
// reader's reassembly memory stayed full and no repair arrived (the kernel drops every fragment
// while it is over net.ipv4.ipfrag_high_thresh) until the writer gave up.
bool StatefulWriter::big_repair_due_locked(ReaderProxy& p, SequenceNumber sn, SteadyTime now) {
  // Its answer to a repair cannot come sooner than this.
  const auto settle = slowest_ack_ + kRepairHoldoff;
  auto& slots = p.big_repairs;
  auto it = std::find_if(slots.begin(), slots.end(), [&](const auto& r) { return r.sn == sn; });
  if (it == slots.end()) {  // a first repair: in place of the oldest
    it = std::min_element(slots.begin(), slots.end(),
                          [](const auto& a, const auto& b) { return a.at < b.at; });
    *it = {sn, now, 0};
    return true;
  }
  const auto holdoff = std::min<Duration>(settle * (Duration::rep{1} << std::min(it->again, 10u)),
                                          kBigRepairBackoffMax);
  if (now - it->at <= holdoff) {  // asked before the repair could have arrived, or backing off
    stats_.repairs_held_back++;
    return false;
  }
  it->at = now;
  if (++it->again >= kBigRelostMax && big_datagram_reader(p)) {
    p.info.max_datagram = 0;
    update_max_payload_locked();
    stats_.datagram_fallbacks++;
  }
  return true;
}

}  // namespace pubsub::rtps
