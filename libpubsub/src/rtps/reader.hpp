// StatefulReader: one RTPS reader with a proxy per matched writer.
//
// OVERVIEW
// - on_data()/on_data_frag()/on_heartbeat()/on_gap()/on_heartbeat_frag() run on the transport's
//   receive thread. In-order samples are delivered straight from the datagram (zero copy);
//   samples ahead of a hole are copied into a bounded out-of-order buffer; DATA_FRAGs are
//   reassembled into a per-sample buffer bounded by max_sample_size and the resource limits.
// - Reliable proxies deliver each writer's samples exactly once and in sequence order. A proxy
//   has no start point until the writer's first HEARTBEAT (or a GAP from the start): samples
//   that arrive before it wait in the out-of-order buffer. The start point is the HEARTBEAT's
//   firstSN - the reader asks for everything the writer still holds, and the writer (which
//   knows when the reader joined) answers what is not meant for it with GAPs.
// - ACKNACKs are not sent from inside the message walk: handlers mark the proxy, and the
//   participant calls send_pending_acks() at the end of each receive batch, so one ACKNACK
//   answers all the HEARTBEATs of a burst. A HEARTBEAT that comes with a fragment of the sample
//   still arriving (Fast DDS sends one with every DATA_FRAG datagram) is answered
//   kFragmentAnswerDelay later from on_timer(), once for all of them.
// - Back-pressure: the delivery callback may refuse a sample (return false). The sample is then
//   kept in the out-of-order buffer if there is room, the proxy stops advancing, and its
//   ACKNACKs stop acknowledging: the writer's history fills and its write() blocks. resume() (or
//   the timer) retries delivery.
// - NACKs are held off for kNackHoldoff after each request for repairs; a HEARTBEAT in that
//   time is acknowledged without NACKs and the request is repeated when the holdoff ends.
// - on_timer() runs on the event thread: pre-emptive ACKNACKs to writers not yet heard from,
//   deferred NACKs, and retries of refused deliveries.
// One mutex (mu_) guards all state; the delivery callback runs with it held, so the callback
// must not call back into this reader. The receive worker holds it across a run of DATA
// submessages of one datagram for this reader (lock_run()): one lock per batch of samples.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"
#include "pubsub/stats.hpp"
#include "pubsub/transport.hpp"
#include "rtps/history.hpp"
#include "rtps/loans.hpp"
#include "wire/message.hpp"

namespace pubsub::rtps {

using SteadyTime = std::chrono::steady_clock::time_point;

struct ReaderConfig {
  Guid guid;
  ReaderQos qos;
  size_t max_sample_size = 256u << 20;
  bool loans = false;  // its listener takes LoanedSamples (and may keep them)
};

struct RemoteWriterInfo {
  Guid guid;
  bool reliable = true;
  std::vector<Locator> unicast;  // where ACKNACKs go
  // Its vendor's form of the pre-emptive ACKNACK (before the first HEARTBEAT): bitmapBase 0, as
  // Fast DDS's readers send it. A Fast DDS writer answers only that one with a HEARTBEAT; the
  // base-1 form (Cyclone's, ours) makes it restart its HEARTBEAT period instead.
  bool preemptive_base_zero = false;
};

struct ReceivedSample {
  Guid writer;
  SequenceNumber sn = 0;
  bool has_timestamp = false;
  Time source_timestamp;
  Time reception_timestamp;
  bool has_key_hash = false;
  KeyHash key_hash;
  uint32_t status_info = 0;
  bool key_only = false;          // the payload is a serialized key (dispose/unregister)
  const uint8_t* data = nullptr;  // serialized payload, encapsulation header included
  size_t size = 0;
  // Set for samples read in place (shared memory, intra-process): a listener may keep them on
  // loan (LoanedSample). Null for network samples, whose buffer is reused after the call.
  const detail::LoanSource* loan_source = nullptr;
};

// A sample read in place from a writer's history (shared memory or in-process).
inline ReceivedSample local_sample(const Guid& writer, const CacheChange& c, const uint8_t* data,
                                   Time reception, const detail::LoanSource* loans) {
  ReceivedSample s;
  s.writer = writer;
  s.sn = c.sn;
  s.has_timestamp = true;
  s.source_timestamp = c.timestamp;
  s.reception_timestamp = reception;
  s.has_key_hash = c.has_key_hash;
  s.key_hash = c.key_hash;
  s.status_info = c.status_info;
  s.key_only = c.status_info != 0 && c.size > 0;
  s.data = data;
  s.size = c.size;
  s.loan_source = loans;
  return s;
}

// Returns false to refuse the sample for now (back-pressure).
using DeliverFn = std::function<bool(const ReceivedSample&)>;
// After one or more DeliverFn calls on a thread, before the reader's lock is released: the end
// of a batch of deliveries (the receiver may have held a lock of its own across them).
using DeliveryEndFn = std::function<void()>;

// How a sample reached a reader (see StatefulWriter).
enum class Delivery : uint8_t { kNetwork, kSharedMemory, kIntraProcess };
enum class LocalDelivery : uint8_t { kAccepted, kRefused, kGone };

// A sample's bytes, allocated without being zeroed (they are about to be overwritten). It keeps
// its allocation when given a smaller size, so a recycled buffer costs no allocation.
class SampleBuffer {
 public:
  SampleBuffer() = default;
  SampleBuffer(SampleBuffer&& o) noexcept : p_(std::move(o.p_)), n_(o.n_), cap_(o.cap_) {
    o.n_ = o.cap_ = 0;
  }
  SampleBuffer& operator=(SampleBuffer&& o) noexcept {
    p_ = std::move(o.p_);
    n_ = std::exchange(o.n_, 0);
    cap_ = std::exchange(o.cap_, 0);
    return *this;
  }
  void allocate(size_t n) {
    if (n > cap_ || !p_) {
      p_.reset(new uint8_t[n]);
      cap_ = n;
    }
    n_ = n;
  }
  void assign(const uint8_t* first, const uint8_t* last) {
    allocate(static_cast<size_t>(last - first));
    if (n_) std::memcpy(p_.get(), first, n_);
  }
  uint8_t* data() { return p_.get(); }
  const uint8_t* data() const { return p_.get(); }
  size_t size() const { return n_; }
  size_t capacity() const { return cap_; }

 private:
  std::unique_ptr<uint8_t[]> p_;
  size_t n_ = 0;
  size_t cap_ = 0;
};

using pubsub::ReaderStats;

class StatefulReader {
 public:
  StatefulReader(const ReaderConfig& config, Transport& transport, const GuidPrefix& local,
                 DeliverFn deliver, DeliveryEndFn delivery_end = nullptr);

  const Guid& guid() const { return config_.guid; }
  const ReaderConfig& config() const { return config_; }

  void add_writer(const RemoteWriterInfo& writer, SteadyTime now);
  // Forgets a writer. Returns its samples that will now never be delivered: of a reliable
  // writer, those it sent or announced (HEARTBEAT) that were not delivered - held back (refused,
  // or waiting behind a hole) or never received; none for a best-effort one.
  UndeliveredSamples remove_writer(const Guid& writer);
  size_t matched_writers() const;
  bool wait_for_writers(size_t n, SteadyTime deadline);

  // Message handlers (receive thread). They return true when an ACKNACK became due.
  bool on_data(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m, Time reception);
  // A run of DATA submessages of one datagram, all for this reader (the receive worker's: a
  // batch of small samples): lock_run() once, on_data_in_run() for each, unlock_run() before
  // anything else - another submessage, another reader, the end of the datagram.
  void lock_run() { mu_.lock(); }
  void on_data_in_run(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m,
                      Time reception) {
    on_data_locked(ctx, m, reception);
  }
  void unlock_run() {
    end_deliveries_locked();
    mu_.unlock();
  }
  bool on_data_frag(const wire::ReceiveContext& ctx, const wire::DataFragSubmessage& m,
                    Time reception);
  // With a heartbeat_response_delay the answer is held back: answer_at tells when it becomes
  // due, the first time (the owner makes sure on_timer() runs by then); untouched otherwise.
  bool on_heartbeat(const wire::ReceiveContext& ctx, const wire::HeartbeatSubmessage& m,
                    SteadyTime* answer_at = nullptr);
  bool on_gap(const wire::ReceiveContext& ctx, const wire::GapSubmessage& m);
  bool on_heartbeat_frag(const wire::ReceiveContext& ctx, const wire::HeartbeatFragSubmessage& m);

  // Writers reached without the network (shared memory, intra-process): counted as matched,
  // never sent ACKNACKs. Their samples come through deliver_local(), from the shared-memory
  // receive thread or the writing thread, each writer's in order.
  void add_local_writer(const Guid& writer);
  void remove_local_writer(const Guid& writer);
  LocalDelivery deliver_local(const ReceivedSample& s, Delivery path);
  void count_lost(uint64_t n);

  void send_pending_acks();
  void resume();
  // Stops delivery for good: once it returns, the callback is not running and never runs
  // again, although a receive worker may still hold this reader in its route snapshot.
  void detach();
  SteadyTime on_timer(SteadyTime now);
  ReaderStats stats() const;

 private:
  struct Stored {
    bool irrelevant = false;  // a GAP placeholder
    SampleBuffer data;
    ReceivedSample meta;  // data/size point into `data` when delivered
  };
  struct FragBuffer {
    uint32_t sample_size = 0;
    uint32_t fragment_size = 0;
    uint32_t total = 0;
    uint32_t received = 0;
    uint32_t sent_up_to = 0;  // HEARTBEAT_FRAG: fragments the writer has sent so far
    SampleBuffer data;
    std::vector<uint64_t> have;
    ReceivedSample meta;
    bool test(uint32_t f) const { return have[(f - 1) / 64] >> ((f - 1) % 64) & 1; }
    void set(uint32_t f) { have[(f - 1) / 64] |= uint64_t{1} << ((f - 1) % 64); }
  };
  struct WriterProxy {
    RemoteWriterInfo info;
    SequenceNumber next = 1;  // every sequence number below is delivered or irrelevant
    bool synced = false;
    bool any_received = false;
    SequenceNumber hb_last = 0;
    SteadyTime answer_at{};  // a HEARTBEAT answer held back until then (epoch: none)
    SequenceNumber hb_frag_sn = 0;
    bool has_hb_count = false;
    uint32_t last_hb_count = 0;
    std::map<SequenceNumber, Stored> buffered;
    std::map<SequenceNumber, FragBuffer> fragments;
    bool ack_pending = false;
    bool refused = false;
    uint32_t acknack_count = 0;
    uint32_t nackfrag_count = 0;
    SteadyTime last_preemptive{};
    // NACK holdoff: after asking for repairs, acknowledge without asking again until this
    // time, so that repairs (and reordered originals) still in flight are not requested twice.
    SteadyTime nack_holdoff_until{};
    bool nack_deferred = false;
    // The tail: announced numbers above everything received. It is asked for only once it has
    // been missing for kTailDelay (since tail_since, up to tail_mark): until then it may still
    // be on its way.
    SteadyTime tail_since{};
    SequenceNumber tail_mark = 0;
  };

  WriterProxy* find_locked(const Guid& g);
  // A complete sample: delivered, buffered or dropped. `owned` may be moved from.
  void accept_locked(WriterProxy& p, ReceivedSample& s, SampleBuffer* owned);
  bool deliver_locked(WriterProxy& p, ReceivedSample& s);
  void on_data_locked(const wire::ReceiveContext& ctx, const wire::DataSubmessage& m,
                      Time reception);
  void store_locked(WriterProxy& p, const ReceivedSample& s, SampleBuffer* owned);
  void drain_locked(WriterProxy& p);
  void skip_to_locked(WriterProxy& p, SequenceNumber first);
  void drop_below_locked(WriterProxy& p);
  UndeliveredSamples undelivered_locked(const WriterProxy& p) const;  // remove_writer's
  void release_fragments_locked(WriterProxy& p, std::map<SequenceNumber, FragBuffer>::iterator it);
  // Reassembly entries (map node, fragment bitmap, sample buffer) are kept for the next
  // fragmented sample (up to kSpareBuffers holding kSpareBytes), so that a stream of large
  // samples allocates nothing per sample: a fresh allocation of tens of KiB is faulted in page
  // by page each time (a quarter of the recorder's CPU at 63000 B before).
  using FragMap = std::map<SequenceNumber, FragBuffer>;
  FragMap::iterator start_fragments_locked(WriterProxy& p, SequenceNumber sn, uint32_t sample_size,
                                           uint32_t fragment_size);
  FragMap::node_type take_fragments_locked(WriterProxy& p, FragMap::iterator it);
  void recycle_locked(FragMap::node_type&& node);
  void send_acknack_locked(WriterProxy& p, bool preemptive, SteadyTime now);
  // How far up an ACKNACK may ask for whole samples: everything announced up to `last`, except
  // a tail above the highest sample received that has been missing for less than kTailDelay.
  SequenceNumber ripe_tail_locked(WriterProxy& p, SequenceNumber last, SteadyTime now);
  void mark_ack_locked(WriterProxy& p);
  bool room_locked(size_t size) const;

  ReaderConfig config_;
  Transport& transport_;
  GuidPrefix local_prefix_;
  DeliverFn deliver_;
  DeliveryEndFn delivery_end_;
  bool delivered_ = false;  // under mu_: deliver_ called since delivery_end_ last ran
  // mu_ for a call that may deliver: on release, delivery_end_ runs when anything was delivered.
  class Locked {
   public:
    explicit Locked(StatefulReader& r) : r_(r) { r_.mu_.lock(); }
    ~Locked() {
      r_.end_deliveries_locked();
      r_.mu_.unlock();
    }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

   private:
    StatefulReader& r_;
  };
  void end_deliveries_locked() {
    if (!delivered_) return;
    delivered_ = false;
    if (delivery_end_) delivery_end_();
  }

  mutable std::mutex mu_;
  std::condition_variable matched_cv_;
  std::unordered_map<Guid, WriterProxy> writers_;
  std::vector<Guid> local_writers_;
  WriterProxy* last_proxy_ = nullptr;  // lookup cache for runs of samples from one writer
  Guid last_guid_;
  std::vector<WriterProxy*> pending_;  // proxies with an ACKNACK due
  size_t buffered_bytes_ = 0;
  size_t buffered_samples_ = 0;
  static constexpr size_t kSpareBuffers = 4;
  static constexpr size_t kSpareBytes = size_t{16} << 20;
  std::vector<FragMap::node_type> spare_;
  size_t spare_bytes_ = 0;
  uint8_t send_buf_[2048];
  ReaderStats stats_;
};

}  // namespace pubsub::rtps
