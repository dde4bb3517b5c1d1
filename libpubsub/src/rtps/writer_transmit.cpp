// StatefulWriter, sending new data: batching, whole samples, fragments and HEARTBEATs.
// writer.hpp has the overview of the whole class (which file holds which role, the threads, the
// lock rule).
//
// send_new_locked() runs on the writing thread (from commit_locked()): a new sample either joins
// the open batch (INFO_TS + DATA packed up to batching.max_bytes, within the transport's batch
// message size; flushed when full, by flush(), or by on_timer() after max_flush_delay) or is sent
// at once: one DATA, or DATA_FRAGs gathered straight from the history with sendmsg's iovec, no
// copy, up to kFragmentBatch datagrams per send_many. The send buffers are members, sized once,
// so the steady-state write path allocates nothing. send_whole_locked(), send_fragments_locked()
// and send_heartbeat_locked() also send the directed repairs of writer_repair.cpp (with
// INFO_DST) and the HEARTBEATs of the other threads.
//
// A HEARTBEAT rides on new data when one is due (writer_flow.cpp), and half a window into a
// sample one for the samples before it goes out. Every fragmented sample ends with a
// HEARTBEAT_FRAG, and a sample max_unacked_bytes holds fewer than three of with a HEARTBEAT too
// (HEARTBEAT_FRAG alone has a Cyclone reader ask only after its NackDelay, 100 ms).
//
// Once a reader has lost fragments of such a sample, the Pacer spreads them (writer_repair.cpp):
// send_new_locked() then only names the sample in partial_, and finish_partial_locked() sends it
// run by run on the writing thread, fragment repairs first, waiting its turn with the lock
// released; other writes wait until it is out (wait_no_partial_locked()).
//
// State it owns: the open batch (batch_buf_, batch_size_, batch_samples_, batch_payload_,
// batch_opened_), the gathering scratch (scratch_, frag_scratch_), heartbeat_frag_count_ and
// partial_; it adds to the heartbeat-due counters of writer_flow.cpp.
#include "rtps/writer.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "rtps/writer_detail.hpp"

namespace pubsub::rtps {

wire::OutgoingInlineQos StatefulWriter::inline_qos(const CacheChange& c) const {
  wire::OutgoingInlineQos q;
  if (c.has_key_hash) q.key_hash = &c.key_hash;
  q.status_info = c.status_info;
  return q;
}

void StatefulWriter::flush() {
  std::lock_guard lk(mu_);
  flush_batch_locked(true);
}

void StatefulWriter::send_new_locked(const CacheChange& c, bool may_pace) {
  if (destinations_.empty()) return;
  const auto& batching = config_.qos.batching;
  const auto qos = inline_qos(c);
  const size_t need = wire::MessageBuilder::data_overhead(qos) + c.size;
  // As RTI's batch size: a sample of at least max_bytes goes alone, and a batch is flushed once
  // its samples' bytes reach max_bytes. Independently the datagram, headers included, stays
  // within the transport's message size: a sample that would overflow it starts a new batch.
  if (batching.enabled && c.size < batching.max_bytes &&
      need + wire::kHeaderSize <= batch_datagram_limit_) {
    append_to_batch_locked(c, qos, need);
    return;
  }
  flush_batch_locked(false);
  if (c.size <= c.max_payload) {
    send_whole_locked(c, destinations_, nullptr, heartbeat_due_locked());
  } else if (may_pace && pacer_.active() && reliable_readers_ > 0 && paced_size(c.size)) {
    partial_ = {c.sn, 1};  // the writing thread sends it run by run (finish_partial_locked)
  } else {
    send_fragments_locked(c, destinations_, nullptr, 1, fragment_count(c),
                          sample_heartbeat_due_locked(c));
  }
}

void StatefulWriter::append_to_batch_locked(const CacheChange& c,
                                            const wire::OutgoingInlineQos& qos, size_t need) {
  const auto& batching = config_.qos.batching;
  if (batch_size_ && batch_size_ + need > batch_datagram_limit_) flush_batch_locked(false);
  wire::MessageBuilder b(batch_buf_.data(), batch_buf_.size());
  if (batch_size_ == 0) {
    b.header(local_prefix_);
    batch_opened_ = std::chrono::steady_clock::now();
  } else {
    b.truncate(batch_size_);
  }
  b.info_ts(c.timestamp);
  b.data(kUnknownReader, config_.guid.entity, c.sn, qos, payload(c), c.size, nullptr, 0,
         c.status_info != 0 && c.size > 0);
  batch_size_ = b.size();
  batch_payload_ += c.size;
  bytes_since_heartbeat_ += c.size;
  samples_since_heartbeat_++;
  if (++batch_samples_ >= batching.max_samples || batch_payload_ >= batching.max_bytes) {
    flush_batch_locked(false);
  }
}

void StatefulWriter::flush_batch_locked(bool with_heartbeat) {
  if (batch_size_ == 0) return;
  if (reliable_readers_ > 0 && (with_heartbeat || heartbeat_due_locked())) {
    wire::MessageBuilder b(batch_buf_.data(), batch_buf_.size());
    b.truncate(batch_size_);
    if (put_heartbeat_locked(b, nullptr, history_.last_sn(), true)) batch_size_ = b.size();
  }
  const ConstBuffer part{batch_buf_.data(), batch_size_};
  transport_.send(destinations_, {&part, 1});
  stats_.datagrams_sent += destinations_.size();
  batch_size_ = 0;
  batch_samples_ = 0;
  batch_payload_ = 0;
}

void StatefulWriter::wait_no_partial_locked(std::unique_lock<std::mutex>& lk) {
  space_cv_.wait(lk, [&] { return partial_.sn == 0; });
}

void StatefulWriter::finish_partial_locked(std::unique_lock<std::mutex>& lk) {
  while (partial_.sn) {
    // Repairs go first: a reader may not ask again for long (see send_frag_repair_locked).
    if (const SteadyTime more = continue_repairs_locked(std::chrono::steady_clock::now());
        more != SteadyTime{}) {
      lk.unlock();
      std::this_thread::sleep_until(more);
      lk.lock();
      continue;
    }
    const CacheChange* c = history_.find(partial_.sn);
    if (!c || destinations_.empty()) break;  // no longer wanted (readers gone)
    const uint32_t total = fragment_count(*c);
    const uint32_t last = std::min<uint32_t>(total, partial_.next + kFragmentBatch - 1);
    const size_t end = std::min<size_t>(c->size, size_t{last} * fragment_size(*c));
    const size_t bytes = end - size_t{partial_.next - 1} * fragment_size(*c);
    const auto wait = pacer_.reserve(bytes, std::chrono::steady_clock::now());
    if (wait > Duration::zero()) {
      lk.unlock();
      std::this_thread::sleep_for(wait);
      lk.lock();
      c = history_.find(partial_.sn);
      if (!c || destinations_.empty()) break;
    }
    const bool final_run = last == total;
    const bool heartbeat = final_run && sample_heartbeat_due_locked(*c);
    send_fragments_locked(*c, destinations_, nullptr, partial_.next, last, heartbeat);
    partial_.next = last + 1;
    if (final_run) break;
  }
  partial_ = {};
  space_cv_.notify_all();  // writes waiting for this sample to be out
}

void StatefulWriter::send_whole_locked(const CacheChange& c, std::span<const Locator> to,
                                       const ReaderProxy* directed, bool heartbeat) {
  wire::MessageBuilder b(scratch_, sizeof scratch_);
  b.header(local_prefix_);
  if (directed) b.info_dst(directed->info.guid.prefix);
  b.info_ts(c.timestamp);
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  b.data_header(reader, config_.guid.entity, c.sn, inline_qos(c), c.size,
                c.status_info != 0 && c.size > 0);
  const size_t head = b.size();
  // Padding and a piggybacked heartbeat follow the payload.
  uint8_t* tail = scratch_ + head;
  const size_t pad = wire::MessageBuilder::padding(c.size);
  std::memset(tail, 0, pad);
  size_t tail_size = pad;
  if (heartbeat && reliable_readers_ > 0) {
    wire::MessageBuilder hb(tail + pad, sizeof scratch_ - head - pad);
    put_heartbeat_locked(hb, directed, history_.last_sn(), true);
    tail_size += hb.size();
  } else if (!directed) {
    bytes_since_heartbeat_ += c.size;
    samples_since_heartbeat_++;
  }
  const ConstBuffer parts[3] = {{scratch_, head}, {payload(c), c.size}, {tail, tail_size}};
  transport_.send(to, parts);
  stats_.datagrams_sent += to.size();
}

void StatefulWriter::send_fragments_locked(const CacheChange& c, std::span<const Locator> to,
                                           const ReaderProxy* directed, uint32_t first,
                                           uint32_t last, bool heartbeat) {
  const EntityId reader = directed ? directed->info.guid.entity : kUnknownReader;
  const auto qos = inline_qos(c);
  // Up to kFragmentBatch fragments leave in one send_many (one sendmmsg per destination); their
  // headers and tails are built side by side in frag_scratch_.
  ConstBuffer parts[kFragmentBatch][3];
  std::span<const ConstBuffer> datagrams[kFragmentBatch];
  size_t n = 0;
  size_t sent_bytes = 0;
  const auto began = std::chrono::steady_clock::now();
  auto send = [&] {
    if (n == 0) return;
    transport_.send_many(to, {datagrams, n});
    stats_.datagrams_sent += n * to.size();
    n = 0;
  };
  const uint32_t total = fragment_count(c);
  const uint32_t frag_size = fragment_size(c);
  for (uint32_t f = first; f <= last; ++f) {
    const size_t begin = size_t{f - 1} * frag_size;
    const size_t len = std::min<size_t>(frag_size, c.size - begin);
    uint8_t* area = frag_scratch_.data() + n * kFragmentScratch;
    wire::MessageBuilder b(area, kFragmentScratch);
    b.header(local_prefix_);
    if (directed) b.info_dst(directed->info.guid.prefix);
    b.info_ts(c.timestamp);
    // Inline QoS (key hash) travels with the first fragment only.
    b.data_frag_header(reader, config_.guid.entity, c.sn, f == 1 ? qos : wire::OutgoingInlineQos{},
                       f, 1, static_cast<uint16_t>(frag_size), c.size, len);
    const size_t head = b.size();
    uint8_t* tail = area + head;
    const size_t pad = wire::MessageBuilder::padding(len);
    std::memset(tail, 0, pad);
    size_t tail_size = pad;
    if (!directed) bytes_since_heartbeat_ += len;
    if (!directed && f < total && reliable_readers_ > 0 && bytes_since_heartbeat_ >= cwnd_ / 2) {
      // Half a window within one sample: a HEARTBEAT for the samples before it, so that a
      // reader's answer can come (and show whether it waited on purpose) while this one is sent.
      wire::MessageBuilder hb(tail + pad, kFragmentScratch - head - pad);
      put_heartbeat_locked(hb, nullptr, c.sn - 1, true);
      tail_size += hb.size();
    } else if (f == last && reliable_readers_ > 0 && (directed || last == total)) {
      // HEARTBEAT_FRAG after every fragmented sample (a reader missing fragments asks for them
      // at once; a complete one stays silent); a HEARTBEAT only when one is due.
      wire::MessageBuilder hb(tail + pad, kFragmentScratch - head - pad);
      hb.heartbeat_frag(reader, config_.guid.entity, c.sn, fragment_count(c),
                        ++heartbeat_frag_count_);
      // A repair may go out while a new sample is half sent: announce only what is out.
      if (heartbeat) {
        put_heartbeat_locked(hb, directed, directed ? sent_last_locked() : history_.last_sn(),
                             true);
      }
      tail_size += hb.size();
    }
    sent_bytes += len;
    parts[n][0] = {area, head};
    parts[n][1] = {payload(c) + begin, len};
    parts[n][2] = {tail, tail_size};
    datagrams[n] = {parts[n], 3};
    if (++n == kFragmentBatch) send();
  }
  send();
  pacer_.note_sent(sent_bytes, began, std::chrono::steady_clock::now());
  if (!directed && !heartbeat && last == total) samples_since_heartbeat_++;
}

void StatefulWriter::send_heartbeat_locked(std::span<const Locator> to,
                                           const ReaderProxy* directed) {
  if (to.empty()) return;
  wire::MessageBuilder b(scratch_, sizeof scratch_);
  b.header(local_prefix_);
  if (directed) b.info_dst(directed->info.guid.prefix);
  put_heartbeat_locked(b, directed, sent_last_locked(), true);
  const ConstBuffer part{scratch_, b.size()};
  transport_.send(to, {&part, 1});
  stats_.datagrams_sent += to.size();
}

}  // namespace pubsub::rtps
