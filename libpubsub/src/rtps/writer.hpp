// StatefulWriter: one RTPS writer with its history, its packer and a proxy per matched reader.
//
// OVERVIEW
// A sample enters the history on the writing thread (write(), or loan() and write_loan()), which
// then sends it to the network readers (batched, whole or in fragments), publishes it to the
// shared-memory readers and hands it to the intra-process ones. ACKNACKs and NACK_FRAGs from
// network readers acknowledge (releasing history and growing the congestion window) and ask for
// repairs. The event thread flushes batches, sends periodic HEARTBEATs and the rest of paced
// repairs, and offers intra-process readers what they refused.
//
// Three ways to a reader (RemoteReaderInfo::delivery, chosen by the participant at matching):
// network (RTPS over the transport), shared memory (the history lives in a shm::WriterSegment,
// which the reader reads in place) and intra-process (the writer calls the reader's
// deliver_local()).
//
// FILES (one class, six files; each opens with the overview of its role: who owns what, which
// thread runs it; the private members below are grouped in the same order)
// - writer.cpp: construction, matching (add_reader/remove_reader, the destinations and datagram
//   size of new data, wait_for_readers/wait_for_acknowledgments), on_timer() - the event
//   thread's entry, which calls into the roles below - and stats().
// - writer_history.cpp: history and loans: write(), loan()/write_loan()/release_loan(), making
//   room (KEEP_LAST drops, KEEP_ALL waits), releasing what the readers acknowledged, and the
//   writer's waits (wait_locked/notify_locked).
// - writer_local.cpp: same-host readers: publishing to the shared-memory segment, reading its
//   readers' acknowledgements and reaping dead ones; intra-process delivery and loan releases.
// - writer_transmit.cpp: sending new data: the batch, whole samples, fragments and HEARTBEATs,
//   and a paced sample sent run by run.
// - writer_flow.cpp: the congestion window (AIMD, its cap, acknowledgement delays, probes) and
//   when a HEARTBEAT is due and what it announces.
// - writer_repair.cpp: ACKNACK and NACK_FRAG: retransmissions, GAPs, fragment repairs, the pacer
//   after a loss, repairs in big datagrams.
// writer_detail.hpp holds the constants more than one of them uses.
//
// THREADS
// - Writing threads (the application's): write(), loan(), write_loan(), release_loan(), flush();
//   the listeners of intra-process readers run on them.
// - Whichever thread releases an intra-process reader's loan: on_loans_released() (also from
//   within such a listener, on the writing thread).
// - The transport's receive thread: on_acknack(), on_nack_frag().
// - The participant's event thread: on_timer().
// - Whichever thread discovery matches on (under the participant's entities lock):
//   add_reader(), remove_reader().
// - Application threads: matched_readers(), wait_for_readers(), wait_for_acknowledgments(),
//   stats().
//
// LOCK
// One mutex (mu_) guards everything; methods ending in _locked expect it held. It is released
// only to wait: for room, acknowledgements, matches or the end of a loan (wait_locked(): the
// condition variable, or the segment's progress futex), for another write's paced sample to be
// out (wait_no_partial_locked()), and while paced, the writing thread waits its turn with the
// lock released (finish_partial_locked()). Intra-process delivery runs on the writing thread
// with mu_ held while the reader takes its own lock, so a listener must not write back to this
// writer (on_loans_released(), which it may reach, does not take mu_ again). mu_ is taken after
// the participant's entities lock and before the transport's (participant_impl.hpp).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"
#include "pubsub/stats.hpp"
#include "pubsub/transport.hpp"
#include "rtps/durable_history.hpp"
#include "rtps/history.hpp"
#include "rtps/pacer.hpp"
#include "rtps/reader.hpp"
#include "shm/segment.hpp"
#include "wire/message.hpp"

namespace pubsub::rtps {

using SteadyTime = std::chrono::steady_clock::time_point;

struct WriterConfig {
  Guid guid;
  WriterQos qos;
  bool keyed = false;
  // Unacknowledged bytes allowed in flight to reliable readers before write() waits.
  size_t max_unacked_bytes = 4u << 20;
};

struct RemoteReaderInfo {
  Guid guid;
  bool reliable = true;
  bool durable = false;  // transient-local: gets the whole history
  std::vector<Locator> unicast;
  std::vector<Locator> multicast;
  Delivery delivery = Delivery::kNetwork;
  std::shared_ptr<shm::Doorbell> doorbell;  // kSharedMemory: its participant's
  std::shared_ptr<StatefulReader> local;    // kIntraProcess
  // kNetwork: the largest datagram to send it (IP fragments above the MTU); 0: the transport's
  // max_message_size. Samples written while it is matched fit the smallest of its readers'.
  size_t max_datagram = 0;
  // kNetwork: its answers come late because it queues them, not by design (a Cyclone DDS reader
  // answers from its event thread while its receive thread reads on): its delay does not raise
  // the window's cap (window_cap()), which would let bursts overrun its small socket buffer.
  bool queued_answers = false;
};

using pubsub::WriterStats;

struct WriteRequest {
  const uint8_t* encapsulation = nullptr;  // optional 4-byte prefix (our own CDR header)
  size_t encapsulation_size = 0;
  const uint8_t* body = nullptr;
  size_t body_size = 0;
  size_t padding = 0;  // zero bytes appended to reach a multiple of 4
  const KeyHash* key_hash = nullptr;
  uint32_t status_info = 0;
  Time timestamp;
};

class StatefulWriter : public std::enable_shared_from_this<StatefulWriter> {
 public:
  // With a segment, the history lives in it and same-host readers can read it.
  StatefulWriter(const WriterConfig& config, Transport& transport, const GuidPrefix& local,
                 std::unique_ptr<shm::WriterSegment> segment = nullptr);
  const shm::WriterSegment* segment() const { return segment_.get(); }
  // Descriptors the history keeps for this QoS (its segment must hold as many).
  static size_t history_samples(const WriterQos& qos);

  const Guid& guid() const { return config_.guid; }
  const WriterConfig& config() const { return config_; }

  // Blocks up to max_blocking_time for history space unless may_block is false.
  Result<void> write(const WriteRequest& request, bool may_block);
  // Zero-copy writes: lends the history space of the next sample (`size` serialized bytes,
  // encapsulation included), which the caller fills and then commits with write_loan() or
  // gives back with release_loan(). One loan at a time: other writes wait until it ends.
  Result<uint8_t*> loan(size_t size, bool may_block);
  Result<void> write_loan(const WriteRequest& meta, size_t padding, bool may_block = true);
  void release_loan();
  void flush();

  void add_reader(const RemoteReaderInfo& reader, SteadyTime now);
  void remove_reader(const Guid& reader);
  size_t matched_readers() const;
  std::vector<Guid> matched_reader_guids() const;
  // Waits until every reliable reader acknowledged everything written so far.
  bool wait_for_acknowledgments(SteadyTime deadline);
  // Waits until at least n readers are matched (and, if reliable, have acknowledged once).
  bool wait_for_readers(size_t n, SteadyTime deadline);

  void on_acknack(const GuidPrefix& source, const wire::AckNackSubmessage& m, SteadyTime now);
  // Returns when on_timer() must run to send the rest of the repair (epoch: not needed).
  SteadyTime on_nack_frag(const GuidPrefix& source, const wire::NackFragSubmessage& m,
                          SteadyTime now);
  // Returns when it next wants to run.
  SteadyTime on_timer(SteadyTime now);

  WriterStats stats() const;

 private:
  struct ReaderProxy {
    RemoteReaderInfo info;
    SequenceNumber acked = 0;    // every sequence number <= acked is acknowledged
    SequenceNumber join_sn = 0;  // volatile: samples <= join_sn are not for this reader
    bool synced = false;         // an ACKNACK has arrived
    bool has_count = false;
    uint32_t last_acknack_count = 0;
    uint32_t last_nackfrag_count = 0;
    bool has_nackfrag_count = false;
    // The last repair: samples up to repaired_hi went out again at repaired_at. NACKs for them
    // within kRepairHoldoff are for copies still on their way, and are not answered again.
    SequenceNumber repaired_hi = 0;
    SteadyTime repaired_at{};
    // The fragments of its last NACK_FRAG not sent yet (sn 0: none): frags.bits from index next.
    struct FragRepair {
      SequenceNumber sn = 0;
      wire::NumberSet frags;
      uint32_t next = 0;
    };
    FragRepair frag_repair;
    // Acknowledgement delay (writer_flow.cpp): the HEARTBEAT it has yet to answer was sent at
    // hb_since (epoch: none) - clean when it had acknowledged all before the previous one,
    // hb_last; ack_delay is the smoothed delay of its clean answers (0: none measured yet).
    SteadyTime hb_since{};
    bool hb_clean = false;
    SequenceNumber hb_last = 0;
    SequenceNumber hb_announced = 0;  // the last sequence number that HEARTBEAT announced
    std::chrono::nanoseconds ack_delay{0};
    // Datagrams above the MTU (info.max_datagram, big_repair_due_locked): the last samples in
    // them repaired for it, when, and how often it asked again after a repair.
    struct BigRepair {
      SequenceNumber sn = 0;
      SteadyTime at{};
      uint32_t again = 0;
    };
    std::array<BigRepair, 8> big_repairs{};
    int slot = -1;      // kSharedMemory: its slot in the segment once it has attached
    bool gone = false;  // a local reader that detached or died: holds nothing back
    // kIntraProcess with a loaning listener: samples it keeps hold back acknowledgement and
    // the reuse of their history space.
    detail::LoanSource loans;
    bool network() const { return info.delivery == Delivery::kNetwork; }
    bool holds_history() const { return info.reliable && !gone; }
    // What it has acknowledged, less what its listener still holds on loan.
    SequenceNumber effective_acked() const {
      return loans.registry ? std::min(acked, loans.registry->lowest() - 1) : acked;
    }
  };

  // ---- writer.cpp: construction and matching ----
  static WriterHistory make_history(const WriterConfig& config, shm::WriterSegment* segment);
  ReaderProxy* find_locked(const Guid& g);
  std::span<const Locator> reader_locators(const ReaderProxy& p) const;
  void recompute_destinations_locked();
  // max_payload_ from the network readers matched now: the smallest datagram any takes.
  void update_max_payload_locked();
  // The payload one datagram of the transport's own size carries.
  size_t transport_payload() const;

  // ---- writer_history.cpp: history and loans ----
  // Waits (up to max_blocking_time) until no loan is outstanding.
  Result<void> wait_no_loan_locked(std::unique_lock<std::mutex>& lk, bool may_block);
  // After a sample entered the history: sends, publishes and hands it to local readers.
  void commit_locked(CacheChange& c, const WriteRequest& meta, bool may_pace);
  bool room_now_locked(size_t size, size_t window);
  Result<void> make_room_locked(std::unique_lock<std::mutex>& lk, size_t size, bool may_block);
  // KEEP_LAST: drops the oldest samples until `size` fits; false when a reader holds one.
  bool drop_oldest_locked(size_t size);
  void remove_through_locked(SequenceNumber sn);
  // The lowest sample a reader is reading or holds on loan (shm::kNoHold if none): history
  // space from there on is not reused.
  SequenceNumber min_hold_locked();
  SequenceNumber min_acked_locked() const;
  void release_acked_locked();
  // The oldest sequence number still held (the next one to come when the history is empty).
  SequenceNumber first_held_locked() const {
    return history_.empty() ? history_.last_sn() + 1 : history_.first_sn();
  }
  // The oldest a network reader may still ask for: the ring's, or what a durable writer keeps
  // for late joiners (durable_), whichever is older. HEARTBEATs announce it.
  SequenceNumber first_available_locked() const {
    const SequenceNumber ring = first_held_locked();
    const SequenceNumber kept = durable_ ? durable_->first_sn() : 0;
    return kept ? std::min(ring, kept) : ring;
  }
  // A sample by sequence number, from the ring or from durable_ (nullptr: gone), and its payload.
  const CacheChange* sample_locked(SequenceNumber sn) const {
    const CacheChange* c = history_.find(sn);
    return c || !durable_ ? c : durable_->find(sn);
  }
  const uint8_t* payload(const CacheChange& c) const {
    return durable_ && durable_->holds(c) ? durable_->data(c) : history_.data(c);
  }
  // Waits for acknowledgements, releases or matches (condition variable, or the segment's
  // progress futex when shared-memory readers are matched). False once the deadline passed.
  bool wait_locked(std::unique_lock<std::mutex>& lk, SteadyTime deadline);
  void notify_locked();

  // ---- writer_local.cpp: same-host readers (shared memory, intra-process) ----
  void publish_locked();
  void refresh_local_acks_locked();
  void reap_dead_readers_locked(SteadyTime now);
  // Offers intra-process readers what they have not taken; true if one is still behind.
  bool deliver_intra_locked();
  void on_loans_released();

  // ---- writer_transmit.cpp: batching and sending new data ----
  wire::OutgoingInlineQos inline_qos(const CacheChange& c) const;
  void send_new_locked(const CacheChange& c, bool may_pace);
  void append_to_batch_locked(const CacheChange& c, const wire::OutgoingInlineQos& qos,
                              size_t need);
  void flush_batch_locked(bool with_heartbeat);
  void wait_no_partial_locked(std::unique_lock<std::mutex>& lk);
  // Sends the rest of a fragmented sample whose sending the pacer spread out (partial_),
  // waiting for its turn with the lock released.
  void finish_partial_locked(std::unique_lock<std::mutex>& lk);
  void send_whole_locked(const CacheChange& c, std::span<const Locator> to,
                         const ReaderProxy* directed, bool heartbeat);
  void send_fragments_locked(const CacheChange& c, std::span<const Locator> to,
                             const ReaderProxy* directed, uint32_t first, uint32_t last,
                             bool heartbeat);
  void send_heartbeat_locked(std::span<const Locator> to, const ReaderProxy* directed);
  static uint32_t fragment_size(const CacheChange& c) {
    return std::min<uint32_t>(0xfff8, c.max_payload & ~uint32_t{7});
  }
  static uint32_t fragment_count(const CacheChange& c) {
    return (c.size + fragment_size(c) - 1) / fragment_size(c);
  }

  // ---- writer_flow.cpp: congestion window and heartbeat control ----
  bool have_room_locked(size_t size, size_t window) const;
  // The window's ceiling: max_unacked_bytes, more for a late answerer (slowest_ack_).
  size_t window_cap() const;
  void cut_window_locked(const ReaderProxy& p, SequenceNumber lost, SequenceNumber sent_last);
  // An ACKNACK from p: its acknowledgement delay, and the slowest reader's.
  void ack_delay_locked(ReaderProxy& p, SequenceNumber acked_through, SteadyTime now);
  void update_wrap_ahead_locked();
  Duration probe_interval() const;
  // The last sequence number sent: samples still in the open batch have not gone out.
  SequenceNumber sent_last_locked() const;
  bool heartbeat_due_locked() const;
  // MANUAL_BY_TOPIC liveliness with a finite lease: a HEARTBEAT with the liveliness flag to every
  // reader each third of the lease (writes assert it too), so that a writer that goes quiet for
  // longer than its lease - a replay of a gap - stays alive for its readers. When it next runs
  // (epoch: not needed).
  SteadyTime assert_liveliness_locked(SteadyTime now);
  bool sample_heartbeat_due_locked(const CacheChange& c) const;
  // Appends to b a HEARTBEAT announcing [first held, last] (to `directed` only, else to every
  // reader) and books it with heartbeat_sent_locked(); false when it did not fit.
  bool put_heartbeat_locked(wire::MessageBuilder& b, const ReaderProxy* directed,
                            SequenceNumber last, bool due_reset);
  // A HEARTBEAT went out (to every reader, or `directed` only): counts it, restarts the
  // heartbeat-due counters when `due_reset`, starts the readers' acknowledgement-delay clocks.
  void heartbeat_sent_locked(const ReaderProxy* directed, bool due_reset, SequenceNumber announced);
  bool anything_unacked_locked() const;

  // ---- writer_repair.cpp: repairs, pacing, big datagrams ----
  // Returns the highest sequence number it sent (as DATA or GAP), 0 if none.
  SequenceNumber retransmit_locked(ReaderProxy& p, std::span<const SequenceNumber> sns,
                                   SteadyTime now);
  SteadyTime continue_repairs_locked(SteadyTime now);
  SteadyTime continue_frag_repair_locked(ReaderProxy& p, SteadyTime now);
  uint32_t frag_repair_end(const ReaderProxy& p, const CacheChange& c) const;
  size_t frag_repair_left(const ReaderProxy& p, const CacheChange& c) const;
  SteadyTime send_frag_repair_locked(ReaderProxy& p, const CacheChange& c, size_t budget,
                                     SteadyTime now);
  void pace_after_loss_locked(SequenceNumber lost, SteadyTime now);
  // Samples max_unacked_bytes holds fewer than three of leave as one burst each: once a reader
  // has lost some, the pacer spreads them (pacer.hpp).
  bool paced_size(size_t size) const { return size * 3 > config_.max_unacked_bytes; }
  // Whether c goes in datagrams above the transport's size (IP-fragmented), and the losses of
  // such datagrams that make a reader fall back to the transport's size.
  bool in_big_datagrams(const CacheChange& c) const;
  // Whether p asks for datagrams above the transport's size (a Fast DDS reader).
  bool big_datagram_reader(const ReaderProxy& p) const {
    return p.info.max_datagram > max_message_;
  }
  bool big_repair_due_locked(ReaderProxy& p, SequenceNumber sn, SteadyTime now);

  // ---- State. Set at construction, never changed: ----
  WriterConfig config_;
  std::unique_ptr<shm::WriterSegment> segment_;
  Transport& transport_;
  GuidPrefix local_prefix_;
  const size_t max_message_;  // the transport's datagram size

  // mu_ guards all the state below.
  mutable std::mutex mu_;
  std::condition_variable space_cv_;  // history space freed, readers matched or acknowledged

  // History and loans (writer_history.cpp).
  WriterHistory history_;
  // Durable writers (TRANSIENT_LOCAL and more): the last samples of each instance for readers
  // that join later (durable_history.hpp); null for volatile writers.
  std::unique_ptr<DurableHistory> durable_;
  bool loan_active_ = false;
  size_t loan_offset_ = 0;
  size_t loan_size_ = 0;

  // Matching (writer.cpp): the readers, and what they decide.
  std::vector<ReaderProxy> readers_;
  std::vector<Locator> destinations_;  // for new data: shared multicast groups, else unicast
  size_t reliable_readers_ = 0;        // reliable network readers (heartbeats, flow control)
  // The largest payload of one datagram to the network readers matched now: new samples
  // CacheChange::max_payload (update_max_payload_locked()).
  size_t max_payload_;
  size_t local_reliable_ = 0;  // reliable shared-memory and intra-process readers
  size_t shm_readers_ = 0;
  size_t intra_readers_ = 0;
  std::vector<shm::DoorbellHeader*> bells_;  // distinct doorbells of shared-memory readers

  // Same-host readers (writer_local.cpp).
  SteadyTime next_reap_{};
  std::atomic<bool> loans_released_{false};  // by a listener during deliver_intra_locked()

  // Packer state and send buffers (writer_transmit.cpp; send_buf_ and repair_message_ are the
  // repairs', writer_repair.cpp): the open batch lives in batch_buf_.
  const size_t batch_datagram_limit_;  // the transport's datagram size, less room for a HEARTBEAT
  std::vector<uint8_t> batch_buf_;
  size_t batch_size_ = 0;  // bytes used in batch_buf_, 0 = no open batch
  size_t batch_samples_ = 0;
  size_t batch_payload_ = 0;  // samples' bytes in the open batch (against batching.max_bytes)
  SteadyTime batch_opened_;
  std::vector<uint8_t> send_buf_;  // control messages and retransmissions
  // Retransmissions of whole samples are packed into datagrams of at most this size (the
  // transport's unfragmented size): a repair resends what was lost, not a large datagram.
  const size_t repair_message_;
  uint8_t scratch_[512];  // submessage headers of gathered sends
  // Headers and tails of a run of fragments sent together (send_fragments_locked).
  static constexpr size_t kFragmentBatch = 32;
  static constexpr size_t kFragmentScratch = 256;
  std::vector<uint8_t> frag_scratch_;

  // Window and heartbeats (writer_flow.cpp; answers_ is counted by writer_repair.cpp,
  // heartbeat_frag_count_ by writer_transmit.cpp, next_heartbeat_ kept by on_timer()).
  size_t cwnd_;  // congestion window, bytes
  // The longest ack_delay of the readers whose answers are late by design (not queued_answers).
  std::chrono::nanoseconds slowest_ack_{0};
  uint64_t answers_ = 0;            // ACKNACKs and NACK_FRAGs received
  SequenceNumber recovery_sn_ = 0;  // no further halving for losses at or below this
  bool had_loss_ = false;           // slow start until the first loss

  uint32_t heartbeat_count_ = 0;
  uint32_t heartbeat_frag_count_ = 0;
  size_t bytes_since_heartbeat_ = 0;
  size_t samples_since_heartbeat_ = 0;
  SteadyTime next_heartbeat_{};
  SteadyTime next_liveliness_{};  // MANUAL_BY_TOPIC: the next liveliness HEARTBEAT

  // Pacing (writer_repair.cpp sets it off; writer_transmit.cpp sends a paced sample).
  // Fragmented data spread over time once a reader lost some (pacer.hpp). While a write() is
  // sending a sample run by run, partial_ names it and the next fragment; other writes wait.
  Pacer pacer_;
  SequenceNumber pacer_recovery_sn_ = 0;  // losses at or below: the current episode
  struct Partial {
    SequenceNumber sn = 0;  // 0: none
    uint32_t next = 0;
  } partial_;

  WriterStats stats_;
};

}  // namespace pubsub::rtps
