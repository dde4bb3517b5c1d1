// LoanRegistry: the samples of one source (a writer's shared-memory segment read by this
// process, or an intra-process writer's history) that listeners hold as LoanedSamples.
//
// While a sample is on loan its memory is not reused and it is not acknowledged: the shared-
// memory receive thread keeps its slot's hold and acked below the lowest loan, an intra-process
// writer keeps its reader's acknowledgement below it. retain() runs on the delivering thread,
// release() on any thread (a LoanedSample's owner); on_release tells the source to look again.
#pragma once

#include <algorithm>
#include <climits>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub::detail {

class LoanRegistry {
 public:
  static constexpr SequenceNumber kNone = INT64_MAX;
  // Loans one source may have out at once; past it, delivery waits (back-pressure).
  static constexpr size_t kMaxLoans = 4096;

  explicit LoanRegistry(std::function<void()> on_release) : on_release_(std::move(on_release)) {}

  void retain(SequenceNumber sn) {
    std::lock_guard lk(mu_);
    held_.push_back(sn);  // delivered in sequence order: stays sorted
  }
  // False if sn was not on loan.
  bool release(SequenceNumber sn) {
    {
      std::lock_guard lk(mu_);
      auto it = std::find(held_.begin(), held_.end(), sn);
      if (it == held_.end()) return false;
      held_.erase(it);
    }
    if (on_release_) on_release_();
    return true;
  }
  SequenceNumber lowest() const {
    std::lock_guard lk(mu_);
    return held_.empty() ? kNone : held_.front();
  }
  bool full() const {
    std::lock_guard lk(mu_);
    return held_.size() >= kMaxLoans;
  }

 private:
  mutable std::mutex mu_;
  std::vector<SequenceNumber> held_;
  std::function<void()> on_release_;
};

}  // namespace pubsub::detail

namespace pubsub::detail {

// Where a delivered sample may be loaned from: its registry, and what keeps its memory valid
// (the shared-memory attachment holding the mapping, or the intra-process writer).
struct LoanSource {
  std::shared_ptr<LoanRegistry> registry;
  std::weak_ptr<const void> anchor;
};

}  // namespace pubsub::detail
