#include "rtps/reader.hpp"

#include <algorithm>
#include <cstring>

namespace pubsub::rtps {
namespace {

constexpr auto kPreemptivePeriod = std::chrono::milliseconds(200);
constexpr auto kNackHoldoff = std::chrono::milliseconds(5);
// Missing samples above the highest one received are asked for only after this long: a
// HEARTBEAT can overtake the data it announces (on one host, datagrams sent by two threads on
// two CPUs pass through different per-CPU queues), and asking at once repairs samples that
// were never lost. Holes - a sample missing below one received - are asked for at once.
constexpr auto kTailDelay = std::chrono::milliseconds(1);
constexpr size_t kMaxNackFragsPerAck = 8;
// A HEARTBEAT that comes with a fragment of the one sample still arriving (Fast DDS piggybacks a
// HEARTBEAT that asks for an answer on every DATA_FRAG datagram) is answered this much later, so
// that one ACKNACK answers all of a sample's instead of one each: 17 per 1-MiB sample in 64-KiB
// datagrams, tens of thousands a second for the writer to process.
constexpr auto kFragmentAnswerDelay = std::chrono::milliseconds(1);
// Bookkeeping of one partial sample (buffer header, bitmap, map node), counted with its bytes.
constexpr size_t kFragBufferOverhead = 256;

}  // namespace

StatefulReader::StatefulReader(const ReaderConfig& config, Transport& transport,
                               const GuidPrefix& local, DeliverFn deliver,
                               DeliveryEndFn delivery_end)
    : config_(config),
      transport_(transport),
      local_prefix_(local),
      deliver_(std::move(deliver)),
      delivery_end_(std::move(delivery_end)) {}

StatefulReader::WriterProxy* StatefulReader::find_locked(const Guid& g) {
  if (last_proxy_ && last_guid_ == g) return last_proxy_;
  auto it = writers_.find(g);
  if (it == writers_.end()) return nullptr;
  last_proxy_ = &it->second;
  last_guid_ = g;
  return last_proxy_;
}

bool StatefulReader::room_locked(size_t size) const {
  const auto& rl = config_.qos.resource_limits;
  // An empty buffer always takes one sample, so a sample above max_bytes still gets through.
  if (buffered_samples_ == 0) return true;
  return buffered_samples_ < rl.max_samples && buffered_bytes_ + size <= rl.max_bytes;
}

// ---- matching -------------------------------------------------------------------------------

void StatefulReader::add_writer(const RemoteWriterInfo& info, SteadyTime now) {
  std::lock_guard lk(mu_);
  auto [it, inserted] = writers_.try_emplace(info.guid);
  it->second.info = info;
  last_proxy_ = nullptr;
  if (inserted && info.reliable) {
    // Pre-emptive ACKNACK: asks the writer for a HEARTBEAT, our start point.
    it->second.last_preemptive = now;
    send_acknack_locked(it->second, true, now);
  }
  matched_cv_.notify_all();
}

UndeliveredSamples StatefulReader::remove_writer(const Guid& g) {
  std::lock_guard lk(mu_);
  auto it = writers_.find(g);
  if (it == writers_.end()) return {};
  const UndeliveredSamples undelivered = undelivered_locked(it->second);
  for (auto& [sn, s] : it->second.buffered) {
    buffered_bytes_ -= s.data.size();
    buffered_samples_--;
  }
  while (!it->second.fragments.empty()) {
    release_fragments_locked(it->second, it->second.fragments.begin());
  }
  pending_.erase(std::remove(pending_.begin(), pending_.end(), &it->second), pending_.end());
  writers_.erase(it);
  last_proxy_ = nullptr;
  return undelivered;
}

UndeliveredSamples StatefulReader::undelivered_locked(const WriterProxy& p) const {
  if (!p.info.reliable) return {};
  UndeliveredSamples u;
  const auto add = [&u](SequenceNumber sn) {
    u.first = u.count == 0 ? sn : std::min(u.first, sn);
    u.last = std::max(u.last, sn);
    ++u.count;
  };
  const auto irrelevant = [&p](SequenceNumber sn) {
    auto b = p.buffered.find(sn);
    return b != p.buffered.end() && b->second.irrelevant;
  };
  if (!p.synced) {  // no start point: only what arrived counts
    for (const auto& [sn, s] : p.buffered) {
      if (!s.irrelevant) add(sn);
    }
    for (const auto& [sn, f] : p.fragments) {
      if (!p.buffered.count(sn)) add(sn);
    }
    return u;
  }
  // Everything from `next` up to the last sequence number sent or announced, GAP'd ones apart.
  SequenceNumber last = p.hb_last;
  if (!p.buffered.empty()) last = std::max(last, p.buffered.rbegin()->first);
  if (!p.fragments.empty()) last = std::max(last, p.fragments.rbegin()->first);
  while (last >= p.next && irrelevant(last)) --last;
  SequenceNumber first = p.next;
  while (first <= last && irrelevant(first)) ++first;
  if (last < first) return {};
  u.first = first;
  u.last = last;
  u.count = static_cast<uint64_t>(last - first + 1);
  for (auto b = p.buffered.lower_bound(first); b != p.buffered.end() && b->first <= last; ++b) {
    if (b->second.irrelevant) --u.count;
  }
  return u;
}

size_t StatefulReader::matched_writers() const {
  std::lock_guard lk(mu_);
  return writers_.size() + local_writers_.size();
}

bool StatefulReader::wait_for_writers(size_t n, SteadyTime deadline) {
  std::unique_lock lk(mu_);
  return matched_cv_.wait_until(lk, deadline,
                                [&] { return writers_.size() + local_writers_.size() >= n; });
}

void StatefulReader::add_local_writer(const Guid& writer) {
  std::lock_guard lk(mu_);
  if (std::find(local_writers_.begin(), local_writers_.end(), writer) == local_writers_.end()) {
    local_writers_.push_back(writer);
  }
  matched_cv_.notify_all();
}

void StatefulReader::remove_local_writer(const Guid& writer) {
  std::lock_guard lk(mu_);
  std::erase(local_writers_, writer);
}

LocalDelivery StatefulReader::deliver_local(const ReceivedSample& s, Delivery path) {
  Locked lk(*this);
  if (!deliver_) return LocalDelivery::kGone;
  delivered_ = true;
  if (!deliver_(s)) {
    stats_.refused++;
    return LocalDelivery::kRefused;
  }
  stats_.samples_delivered++;
  stats_.bytes_delivered += s.size;
  (path == Delivery::kSharedMemory ? stats_.samples_shm : stats_.samples_intra)++;
  return LocalDelivery::kAccepted;
}

void StatefulReader::count_lost(uint64_t n) {
  std::lock_guard lk(mu_);
  stats_.lost += n;
}

// ---- samples --------------------------------------------------------------------------------

void StatefulReader::detach() {
  Locked lk(*this);
  deliver_ = nullptr;
}

bool StatefulReader::deliver_locked(WriterProxy& p, ReceivedSample& s) {
  if (!deliver_) return false;  // detached: its owner is gone
  delivered_ = true;
  if (!deliver_(s)) {
    stats_.refused++;
    p.refused = true;
    return false;
  }
  stats_.samples_delivered++;
  stats_.bytes_delivered += s.size;
  return true;
}

void StatefulReader::store_locked(WriterProxy& p, const ReceivedSample& s, SampleBuffer* owned) {
  if (p.buffered.count(s.sn)) {
    stats_.duplicates++;
    return;
  }
  if (!room_locked(s.size)) {
    stats_.buffer_full_drops++;
    return;
  }
  Stored st;
  if (owned) {
    st.data = std::move(*owned);
  } else {
    st.data.assign(s.data, s.data + s.size);
  }
  st.meta = s;
  buffered_bytes_ += st.data.size();
  buffered_samples_++;
  p.buffered.emplace(s.sn, std::move(st));
}

void StatefulReader::release_fragments_locked(WriterProxy& p,
                                              std::map<SequenceNumber, FragBuffer>::iterator it) {
  recycle_locked(take_fragments_locked(p, it));
}

StatefulReader::FragMap::node_type StatefulReader::take_fragments_locked(WriterProxy& p,
                                                                         FragMap::iterator it) {
  buffered_bytes_ -= it->second.sample_size + kFragBufferOverhead;
  buffered_samples_--;
  return p.fragments.extract(it);
}

StatefulReader::FragMap::iterator StatefulReader::start_fragments_locked(WriterProxy& p,
                                                                         SequenceNumber sn,
                                                                         uint32_t sample_size,
                                                                         uint32_t fragment_size) {
  FragMap::node_type node;
  size_t pick = spare_.size();
  for (size_t i = 0; i < spare_.size(); ++i) {
    if (spare_[i].mapped().data.capacity() >= sample_size) {
      pick = i;
      break;
    }
  }
  if (pick == spare_.size() && !spare_.empty()) pick = 0;  // its buffer grows
  if (pick < spare_.size()) {
    node = std::move(spare_[pick]);
    spare_[pick] = std::move(spare_.back());
    spare_.pop_back();
    spare_bytes_ -= node.mapped().data.capacity();
    node.key() = sn;
  } else {
    FragMap fresh;
    node = fresh.extract(fresh.emplace(sn, FragBuffer{}).first);
  }
  FragBuffer& fb = node.mapped();
  SampleBuffer data = std::move(fb.data);
  std::vector<uint64_t> have = std::move(fb.have);
  fb = FragBuffer{};
  fb.sample_size = sample_size;
  fb.fragment_size = fragment_size;
  fb.total = static_cast<uint32_t>((uint64_t{sample_size} + fragment_size - 1) / fragment_size);
  data.allocate(sample_size);
  fb.data = std::move(data);
  have.assign((fb.total + 63) / 64, 0);
  fb.have = std::move(have);
  return p.fragments.insert(std::move(node)).position;
}

void StatefulReader::recycle_locked(FragMap::node_type&& node) {
  const size_t cap = node.mapped().data.capacity();
  if (spare_.size() >= kSpareBuffers || spare_bytes_ + cap > kSpareBytes) return;  // freed
  spare_bytes_ += cap;
  if (spare_.capacity() < kSpareBuffers) spare_.reserve(kSpareBuffers);
  spare_.push_back(std::move(node));
}

void StatefulReader::drop_below_locked(WriterProxy& p) {
  while (!p.buffered.empty() && p.buffered.begin()->first < p.next) {
    buffered_bytes_ -= p.buffered.begin()->second.data.size();
    buffered_samples_--;
    p.buffered.erase(p.buffered.begin());
  }
  while (!p.fragments.empty() && p.fragments.begin()->first < p.next) {
    release_fragments_locked(p, p.fragments.begin());
  }
}

void StatefulReader::drain_locked(WriterProxy& p) {
  drop_below_locked(p);
  while (!p.buffered.empty() && p.buffered.begin()->first == p.next) {
    Stored& st = p.buffered.begin()->second;
    if (!st.irrelevant) {
      st.meta.data = st.data.data();
      st.meta.size = st.data.size();
      if (!deliver_locked(p, st.meta)) return;
    }
    buffered_bytes_ -= st.data.size();
    buffered_samples_--;
    p.buffered.erase(p.buffered.begin());
    p.next++;
  }
  p.refused = false;
  drop_below_locked(p);
}

void StatefulReader::accept_locked(WriterProxy& p, ReceivedSample& s, SampleBuffer* owned) {
  if (!p.info.reliable) {
    if (s.sn < p.next) {
      stats_.duplicates++;
      return;
    }
    if (p.any_received && s.sn > p.next) stats_.lost += static_cast<uint64_t>(s.sn - p.next);
    p.any_received = true;
    deliver_locked(p, s);  // best effort: a refused sample is simply lost
    p.next = s.sn + 1;
    drop_below_locked(p);
    return;
  }
  if (s.sn < p.next) {
    stats_.duplicates++;
    return;
  }
  // A writer's first sample: nothing comes before it, so there is no HEARTBEAT to wait for. A
  // writer whose first HEARTBEAT arrived before we had matched it may send the next one only
  // after its period (Fast DDS: 3 s), and a writer with a LIFESPAN shorter than that has dropped
  // its samples from its history by then.
  if (!p.synced && s.sn == 1 && p.next == 1) p.synced = true;
  if (!p.synced || s.sn > p.next || p.refused) {
    if (p.synced && s.sn > p.next) stats_.out_of_order++;
    store_locked(p, s, owned);
    return;
  }
  if (!deliver_locked(p, s)) {
    store_locked(p, s, owned);  // keep it if there is room, so it needs no retransmission
    return;
  }
  p.next++;
  drain_locked(p);
}

bool StatefulReader::on_data(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m,
                             Time reception) {
  Locked lk(*this);
  on_data_locked(ctx, m, reception);
  return false;
}

void StatefulReader::on_data_locked(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m,
                                    Time reception) {
  WriterProxy* p = find_locked(Guid{ctx.source_prefix, m.writer_id});
  if (!p) return;
  ReceivedSample s;
  s.writer = p->info.guid;
  s.sn = m.sn;
  s.has_timestamp = ctx.has_timestamp;
  s.source_timestamp = ctx.timestamp;
  s.reception_timestamp = reception;
  s.has_key_hash = m.qos.has_key_hash;
  s.key_hash = m.qos.key_hash;
  s.status_info = m.qos.status_info;
  s.key_only = m.has_key;
  s.data = m.payload;
  s.size = m.payload_size;
  accept_locked(*p, s, nullptr);
}

bool StatefulReader::on_data_frag(const wire::ReceiveContext& ctx,
                                  const wire::DataFragSubmessage& m, Time reception) {
  Locked lk(*this);
  WriterProxy* p = find_locked(Guid{ctx.source_prefix, m.writer_id});
  if (!p) return false;
  stats_.fragments_received++;
  if (m.sn < p->next || p->buffered.count(m.sn)) {
    stats_.duplicates++;
    return false;
  }
  if (m.sample_size > config_.max_sample_size) {
    stats_.too_large_drops++;
    return false;
  }
  auto it = p->fragments.find(m.sn);
  if (it == p->fragments.end()) {
    // Reassembly space counts against the same limits as the out-of-order buffer, except that
    // the next expected sample is always given room.
    // Each partial sample also counts as a sample, and with its bookkeeping, so that forged
    // tiny fragments cannot pile up entries below the byte limit.
    const auto& rl = config_.qos.resource_limits;
    const size_t cost = m.sample_size + kFragBufferOverhead;
    if (m.sn != p->next &&
        (buffered_bytes_ + cost > rl.max_bytes || buffered_samples_ >= rl.max_samples)) {
      stats_.buffer_full_drops++;
      return false;
    }
    it = start_fragments_locked(*p, m.sn, m.sample_size, m.fragment_size);
    FragBuffer& fb = it->second;
    fb.meta.writer = p->info.guid;
    fb.meta.sn = m.sn;
    fb.meta.reception_timestamp = reception;
    buffered_bytes_ += cost;
    buffered_samples_++;
  }
  FragBuffer& fb = it->second;
  if (fb.fragment_size != m.fragment_size || fb.sample_size != m.sample_size) return false;
  if (ctx.has_timestamp) {
    fb.meta.has_timestamp = true;
    fb.meta.source_timestamp = ctx.timestamp;
  }
  if (m.qos.has_key_hash) {
    fb.meta.has_key_hash = true;
    fb.meta.key_hash = m.qos.key_hash;
  }
  if (m.qos.status_info) fb.meta.status_info = m.qos.status_info;
  fb.meta.key_only = fb.meta.key_only || m.has_key;
  const uint32_t before = fb.received;
  for (uint32_t i = 0; i < m.fragments_in_submessage; ++i) {
    const uint32_t f = m.fragment_start + i;
    const size_t begin = size_t{f - 1} * fb.fragment_size;
    const size_t len = std::min<size_t>(fb.fragment_size, fb.sample_size - begin);
    if (fb.test(f)) continue;
    std::memcpy(fb.data.data() + begin, m.data + size_t{i} * fb.fragment_size, len);
    fb.set(f);
    fb.received++;
  }
  if (fb.received == before) stats_.duplicates++;  // every fragment was already here
  if (fb.received < fb.total) return false;
  // Complete: hand the buffer over to the sample path.
  ReceivedSample s = fb.meta;
  s.data = fb.data.data();
  s.size = fb.data.size();
  FragMap::node_type done = take_fragments_locked(*p, it);
  if (!p->info.reliable) {
    // Best effort: older partial samples will never complete now.
    while (!p->fragments.empty() && p->fragments.begin()->first < s.sn) {
      release_fragments_locked(*p, p->fragments.begin());
    }
  }
  accept_locked(*p, s, &done.mapped().data);
  recycle_locked(std::move(done));  // delivered or dropped (a stored sample took the buffer)
  return false;
}

// ---- protocol -------------------------------------------------------------------------------

void StatefulReader::mark_ack_locked(WriterProxy& p) {
  if (!p.ack_pending) {
    p.ack_pending = true;
    pending_.push_back(&p);
  }
}

void StatefulReader::skip_to_locked(WriterProxy& p, SequenceNumber first) {
  // The writer no longer has [next, first): deliver what we hold of it, count the rest lost.
  while (p.next < first) {
    auto it = p.buffered.begin();
    if (it != p.buffered.end() && it->first < first) {
      if (it->first > p.next) {
        stats_.lost += static_cast<uint64_t>(it->first - p.next);
        p.next = it->first;
      }
      drain_locked(p);
      if (p.refused) return;
    } else {
      stats_.lost += static_cast<uint64_t>(first - p.next);
      p.next = first;
    }
  }
  drain_locked(p);
}

bool StatefulReader::on_heartbeat(const wire::ReceiveContext& ctx,
                                  const wire::HeartbeatSubmessage& m, SteadyTime* answer_at) {
  Locked lk(*this);
  WriterProxy* p = find_locked(Guid{ctx.source_prefix, m.writer_id});
  if (!p || !p->info.reliable || m.liveliness) return false;
  if (p->has_hb_count && static_cast<int32_t>(m.count - p->last_hb_count) <= 0) return false;
  p->has_hb_count = true;
  p->last_hb_count = m.count;
  if (!p->synced) {
    p->synced = true;
    if (m.first > p->next) p->next = m.first;
    drain_locked(*p);
  } else if (m.first > p->next && !p->refused) {
    skip_to_locked(*p, m.first);
  }
  p->hb_last = std::max(p->hb_last, m.last);
  if (!m.final || p->next <= m.last) {
    auto delay = config_.qos.heartbeat_response_delay;
    if (p->next == m.last && p->fragments.count(m.last)) {
      delay = std::max<Duration>(delay, kFragmentAnswerDelay);
    }
    if (delay <= Duration::zero()) {
      mark_ack_locked(*p);
      return true;
    }
    if (p->answer_at == SteadyTime{}) {  // one answer for every HEARTBEAT until it is sent
      p->answer_at = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay);
      if (answer_at) *answer_at = p->answer_at;
    }
  }
  return false;
}

bool StatefulReader::on_gap(const wire::ReceiveContext& ctx, const wire::GapSubmessage& m) {
  Locked lk(*this);
  WriterProxy* p = find_locked(Guid{ctx.source_prefix, m.writer_id});
  if (!p) return false;
  if (!p->synced && m.gap_start <= p->next) p->synced = true;
  auto irrelevant = [&](SequenceNumber sn) {
    if (sn < p->next || p->buffered.count(sn)) return;
    stats_.gapped++;
    if (sn == p->next && !p->refused) {
      p->next++;
      return;
    }
    Stored st;
    st.irrelevant = true;
    st.meta.sn = sn;
    p->buffered.emplace(sn, std::move(st));
    buffered_samples_++;
  };
  const SequenceNumber lo = std::max(m.gap_start, p->next);
  const SequenceNumber hi = m.gap_list.base - 1;
  if (lo <= hi) {
    if (lo == p->next && !p->refused) {
      stats_.gapped += static_cast<uint64_t>(hi - lo + 1);
      p->next = hi + 1;
      drop_below_locked(*p);
    } else if (hi - lo < 256) {
      for (SequenceNumber sn = lo; sn <= hi; ++sn) irrelevant(sn);
    }
  }
  for (uint32_t i = 0; i < m.gap_list.num_bits; ++i) {
    if (m.gap_list.test(i)) irrelevant(m.gap_list.base + i);
  }
  drain_locked(*p);
  return false;
}

bool StatefulReader::on_heartbeat_frag(const wire::ReceiveContext& ctx,
                                       const wire::HeartbeatFragSubmessage& m) {
  Locked lk(*this);
  WriterProxy* p = find_locked(Guid{ctx.source_prefix, m.writer_id});
  if (!p || !p->info.reliable) return false;
  auto f = p->fragments.find(m.sn);
  if (f == p->fragments.end()) return false;
  f->second.sent_up_to = std::max(f->second.sent_up_to, std::min(m.last_fragment, f->second.total));
  p->hb_frag_sn = std::max(p->hb_frag_sn, m.sn);
  mark_ack_locked(*p);
  return true;
}

SequenceNumber StatefulReader::ripe_tail_locked(WriterProxy& p, SequenceNumber last,
                                                SteadyTime now) {
  SequenceNumber seen = p.next - 1;  // the highest sequence number anything arrived for
  if (!p.buffered.empty()) seen = std::max(seen, p.buffered.rbegin()->first);
  if (!p.fragments.empty()) seen = std::max(seen, p.fragments.rbegin()->first);
  if (last <= seen) {  // no tail
    p.tail_since = SteadyTime{};
    return last;
  }
  if (p.tail_since == SteadyTime{} || p.tail_mark <= seen) {  // a new tail
    p.tail_since = now;
    p.tail_mark = last;
  }
  if (now - p.tail_since < kTailDelay) return seen;
  const SequenceNumber ripe = std::min(p.tail_mark, last);
  p.tail_since = now;  // what the HEARTBEATs announced since then waits its turn
  p.tail_mark = last;
  return ripe;
}

void StatefulReader::send_acknack_locked(WriterProxy& p, bool preemptive, SteadyTime now) {
  if (p.info.unicast.empty()) return;
  wire::MessageBuilder b(send_buf_, sizeof send_buf_);
  b.header(local_prefix_);
  b.info_dst(p.info.guid.prefix);
  wire::NumberSet set;
  set.base = preemptive ? (p.info.preemptive_base_zero ? 0 : 1) : p.next;
  const bool may_nack = now >= p.nack_holdoff_until;
  bool missing = false;
  if (!preemptive && !p.refused) {
    const SequenceNumber last = std::min(p.hb_last, p.next + 255);
    SequenceNumber frag_last = std::max(p.hb_last, p.hb_frag_sn);
    // Whole samples above it are not asked for yet (see kTailDelay).
    const SequenceNumber nack_upto = ripe_tail_locked(p, last, now);
    bool withheld = false;
    size_t nack_frags = 0;
    for (SequenceNumber sn = p.next; sn <= std::max(last, frag_last); ++sn) {
      if (p.buffered.count(sn)) continue;
      auto f = p.fragments.find(sn);
      if (f != p.fragments.end() && f->second.received > 0) {
        // NACK_FRAG for the missing fragments, up to 256 from the first missing one. Only
        // fragments the writer has sent can be missing: all of them once a HEARTBEAT covers
        // the sample, else those up to its HEARTBEAT_FRAG.
        const FragBuffer& fb = f->second;
        const uint32_t sent = sn <= p.hb_last ? fb.total : fb.sent_up_to;
        uint32_t first_missing = 1;
        while (first_missing <= sent && fb.test(first_missing)) first_missing++;
        if (first_missing > sent) continue;  // nothing known to be missing yet
        missing = true;
        if (!may_nack || nack_frags >= kMaxNackFragsPerAck) continue;
        wire::NumberSet frags;
        frags.base = first_missing;
        for (uint32_t k = first_missing; k <= sent && k < first_missing + 256; ++k) {
          if (!fb.test(k)) frags.set(k - first_missing);
        }
        if (b.remaining() > 96 &&
            b.nack_frag(config_.guid.entity, p.info.guid.entity, sn, frags, ++p.nackfrag_count)) {
          nack_frags++;
          stats_.nackfrags_sent++;
        }
        continue;
      }
      if (sn > nack_upto) {
        withheld = withheld || sn <= last;
      } else if (sn <= last) {
        missing = true;
        if (may_nack) set.set(static_cast<uint32_t>(sn - p.next));
      }
    }
    if (missing) {
      if (may_nack) {
        p.nack_holdoff_until = now + kNackHoldoff;
      } else {
        p.nack_deferred = true;  // on_timer asks when the holdoff ends
      }
    }
    if (withheld) {
      // on_timer asks again once the tail has waited kTailDelay (or after the holdoff).
      p.nack_deferred = true;
      p.nack_holdoff_until = std::max(p.nack_holdoff_until, p.tail_since + kTailDelay);
    }
  }
  b.acknack(config_.guid.entity, p.info.guid.entity, set, ++p.acknack_count,
            !preemptive && set.num_bits == 0);
  stats_.acknacks_sent++;
  const ConstBuffer part{send_buf_, b.size()};
  transport_.send({&p.info.unicast.front(), 1}, {&part, 1});
}

void StatefulReader::send_pending_acks() {
  std::lock_guard lk(mu_);
  const auto now = std::chrono::steady_clock::now();
  for (WriterProxy* p : pending_) {
    p->ack_pending = false;
    send_acknack_locked(*p, false, now);
  }
  pending_.clear();
}

void StatefulReader::resume() {
  Locked lk(*this);
  for (auto& [g, p] : writers_) {
    if (!p.refused) continue;
    const SequenceNumber before = p.next;
    p.refused = false;
    drain_locked(p);
    if (p.next != before || !p.refused) mark_ack_locked(p);
  }
  const auto now = std::chrono::steady_clock::now();
  for (WriterProxy* p : pending_) {
    p->ack_pending = false;
    send_acknack_locked(*p, false, now);
  }
  pending_.clear();
}

SteadyTime StatefulReader::on_timer(SteadyTime now) {
  bool retry = false;
  SteadyTime next = now + kPreemptivePeriod;
  {
    Locked lk(*this);
    for (auto& [g, p] : writers_) {
      if (p.refused) retry = true;
      if (p.info.reliable && !p.synced && now - p.last_preemptive >= kPreemptivePeriod) {
        p.last_preemptive = now;
        send_acknack_locked(p, true, now);
      }
      if (p.answer_at != SteadyTime{}) {
        if (now >= p.answer_at) {
          p.answer_at = {};
          send_acknack_locked(p, false, now);
        } else {
          next = std::min(next, p.answer_at);
        }
      }
      if (p.nack_deferred) {
        if (now >= p.nack_holdoff_until) {
          p.nack_deferred = false;
          send_acknack_locked(p, false, now);
        } else {
          next = std::min(next, p.nack_holdoff_until);
        }
      }
    }
  }
  if (retry) resume();
  return retry ? std::min(next, now + std::chrono::milliseconds(5)) : next;
}

ReaderStats StatefulReader::stats() const {
  std::lock_guard lk(mu_);
  ReaderStats s = stats_;
  s.matched_writers = writers_.size() + local_writers_.size();
  s.buffered_bytes = buffered_bytes_;
  return s;
}

}  // namespace pubsub::rtps
