// ShmReceiver: the reader side of shared-memory delivery for one participant.
//
// OVERVIEW
// - Owns the participant's doorbell segment and one thread. Each matched same-host writer
//   whose segment could be opened is an Attachment: the mapped segment, the slot claimed in
//   it, the local reader to deliver to and the next sequence number to read.
// - The thread reads every attachment's new samples in place (the reader's callback gets a
//   pointer into the writer's segment: the recorder copies it once, into its chunk), then
//   publishes how far it got in its slot (acked) and wakes the writer if it waits. When
//   nothing is new it spins for `spin`, then sleeps on the doorbell, which writers ring after
//   each sample.
// - A refused sample (back-pressure) stays unacknowledged and is offered again after kick()
//   or within 2 ms. A writer whose process died is no longer read; its segment is removed.
// - attach()/detach() run on the participant's matching threads under its entities lock; the
//   thread works on a snapshot of the attachments, replaced when they change.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rtps/loans.hpp"
#include "rtps/reader.hpp"
#include "shm/segment.hpp"

namespace pubsub::shm {

using LogFn = std::function<void(const std::string&)>;

class ShmReceiver {
 public:
  static Result<std::unique_ptr<ShmReceiver>> create(const std::string& doorbell_name,
                                                     Duration spin, ReceptionClock clock,
                                                     LogFn log);
  ~ShmReceiver();

  const std::string& doorbell_name() const { return bell_->name(); }

  // Reads `writer`'s segment for `reader` from now on (durable: from the oldest sample kept).
  Result<void> attach(const Guid& writer, const std::string& segment,
                      std::shared_ptr<rtps::StatefulReader> reader, bool reliable, bool durable);
  void detach(const Guid& writer, const Guid& reader);
  bool attached(const Guid& writer, const Guid& reader) const;
  // Offers refused samples again now.
  void kick();

 private:
  struct Attachment {
    detail::LoanSource loans;  // samples its reader's listener keeps on loan
    SegmentView view;
    Guid writer;
    std::shared_ptr<rtps::StatefulReader> reader;
    SequenceNumber next = 1;
    bool reliable = true;
    bool refused = false;
    bool writer_dead = false;
    SequenceNumber published_lowest = detail::LoanRegistry::kNone;  // loans as last published
  };

  ShmReceiver(Doorbell bell, Duration spin, ReceptionClock clock, LogFn log);
  void run();
  // Reads what is new; true if it delivered anything.
  bool poll(Attachment& a, Time now);
  void publish_progress(Attachment& a);
  void check_writers(std::vector<std::shared_ptr<Attachment>>& list);

  std::shared_ptr<Doorbell> bell_;  // shared with the loan registries, which ring it
  Duration spin_;
  ReceptionClock clock_;  // stamps what it reads
  LogFn log_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Attachment>> attachments_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pubsub::shm
