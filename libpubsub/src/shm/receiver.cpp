#include "shm/receiver.hpp"

#include <chrono>

#include "common/thread_name.hpp"

namespace pubsub::shm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kIdleSleep = std::chrono::milliseconds(100);
constexpr auto kRetrySleep = std::chrono::milliseconds(2);
constexpr auto kWriterCheckPeriod = std::chrono::milliseconds(100);

}  // namespace

Result<std::unique_ptr<ShmReceiver>> ShmReceiver::create(const std::string& doorbell_name,
                                                         Duration spin, ReceptionClock clock,
                                                         LogFn log) {
  auto bell = Doorbell::create(doorbell_name);
  if (!bell) return bell.error();
  return std::unique_ptr<ShmReceiver>(
      new ShmReceiver(std::move(bell).value(), spin, clock, std::move(log)));
}

ShmReceiver::ShmReceiver(Doorbell bell, Duration spin, ReceptionClock clock, LogFn log)
    : bell_(std::make_shared<Doorbell>(std::move(bell))),
      spin_(spin),
      clock_(clock),
      log_(std::move(log)) {
  thread_ = std::thread([this] { run(); });
  common::name_thread(thread_, "pubsub-shm");
}

ShmReceiver::~ShmReceiver() {
  stop_ = true;
  ring(bell_->header());
  thread_.join();
}

Result<void> ShmReceiver::attach(const Guid& writer, const std::string& segment,
                                 std::shared_ptr<rtps::StatefulReader> reader, bool reliable,
                                 bool durable) {
  auto view = SegmentView::open(segment, writer);
  if (!view) return view.error();
  auto a = std::make_shared<Attachment>();
  a->view = std::move(view).value();
  a->writer = writer;
  a->reader = std::move(reader);
  a->reliable = reliable;
  if (a->reader->config().loans) {
    // A released loan lets the thread move the slot's hold and acknowledgement on.
    a->loans.registry =
        std::make_shared<detail::LoanRegistry>([bell = std::weak_ptr<Doorbell>(bell_)] {
          if (auto b = bell.lock()) ring(b->header());
        });
    a->loans.anchor = a;  // a loaned sample keeps the mapping (and its slot) alive
  }
  const auto& h = a->view.header();
  a->next = durable ? h.first_sn.load(std::memory_order_acquire)
                    : h.last_sn.load(std::memory_order_acquire) + 1;
  if (auto r = a->view.claim(a->reader->guid(), a->next); !r) return r;
  {
    std::lock_guard lk(mu_);
    attachments_.push_back(std::move(a));
  }
  generation_.fetch_add(1);
  kick();
  return {};
}

void ShmReceiver::detach(const Guid& writer, const Guid& reader) {
  {
    std::lock_guard lk(mu_);
    std::erase_if(attachments_, [&](const auto& a) {
      return a->writer == writer && a->reader->guid() == reader;
    });
  }
  generation_.fetch_add(1);
  kick();
}

bool ShmReceiver::attached(const Guid& writer, const Guid& reader) const {
  std::lock_guard lk(mu_);
  for (const auto& a : attachments_) {
    if (a->writer == writer && a->reader->guid() == reader) return true;
  }
  return false;
}

void ShmReceiver::kick() {
  ring(bell_->header());
}

bool ShmReceiver::poll(Attachment& a, Time now) {
  auto& h = a.view.header();
  const SequenceNumber last = h.last_sn.load(std::memory_order_acquire);
  if (a.next > last || a.writer_dead) return false;
  const uint32_t max_samples = h.max_samples;
  // The writer keeps at most max_samples: anything older is gone (also bounds the work done
  // for a corrupt last_sn).
  if (max_samples && last - a.next >= static_cast<SequenceNumber>(max_samples)) {
    const SequenceNumber skip = last - static_cast<SequenceNumber>(max_samples) + 1 - a.next;
    a.reader->count_lost(static_cast<uint64_t>(skip));
    a.next += skip;
  }
  bool delivered = false;
  a.refused = false;
  rtps::CacheChange c;
  while (a.next <= last) {
    if (a.loans.registry && a.loans.registry->full()) {  // too many loans out: wait
      a.refused = true;
      break;
    }
    const uint8_t* data = a.view.acquire(a.next, c);
    if (!data) {  // reclaimed before we got to it (a KEEP_LAST writer moved on)
      a.reader->count_lost(1);
      a.next++;
      continue;
    }
    const auto s =
        rtps::local_sample(a.writer, c, data, now, a.loans.registry ? &a.loans : nullptr);
    const auto r = a.reader->deliver_local(s, rtps::Delivery::kSharedMemory);
    if (r == rtps::LocalDelivery::kRefused && a.reliable) {
      a.refused = true;
      break;
    }
    if (r == rtps::LocalDelivery::kGone) break;
    delivered = delivered || r == rtps::LocalDelivery::kAccepted;
    a.next++;
  }
  publish_progress(a);
  return delivered;
}

// Nothing below the lowest loan is acknowledged or reused; everything else up to next - 1 is.
void ShmReceiver::publish_progress(Attachment& a) {
  const SequenceNumber lowest =
      a.loans.registry ? a.loans.registry->lowest() : detail::LoanRegistry::kNone;
  a.published_lowest = lowest;
  ReaderSlot* slot = a.view.slot();
  slot->hold.store(lowest == detail::LoanRegistry::kNone ? kNoHold : lowest,
                   std::memory_order_seq_cst);
  slot->acked.store(std::min(a.next, lowest) - 1, std::memory_order_release);
  signal_progress(a.view.header());
}

void ShmReceiver::check_writers(std::vector<std::shared_ptr<Attachment>>& list) {
  for (auto& a : list) {
    if (a->writer_dead || a->view.writer_alive()) continue;
    a->writer_dead = true;
    if (log_) {
      log_("shared memory: writer " + a->writer.to_string() +
           " died; its shared memory is removed (its lease ends the match)");
    }
    remove_if_orphaned(a->view.name());
    remove_stale_segments();  // and whatever else its process left (its doorbell)
  }
}

void ShmReceiver::run() {
  auto& bell = bell_->header();
  std::vector<std::shared_ptr<Attachment>> list;
  uint64_t seen_generation = ~uint64_t{0};
  auto next_check = Clock::now() + kWriterCheckPeriod;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (const uint64_t g = generation_.load(); g != seen_generation) {
      std::lock_guard lk(mu_);
      list = attachments_;
      seen_generation = g;
    }
    const uint32_t seq = bell.seq.load(std::memory_order_seq_cst);
    const Time now = clock_.now();
    bool delivered = false, refused = false;
    for (auto& a : list) {
      const bool got = poll(*a, now);
      // Loans released with nothing new to read: acknowledge what they held back.
      if (!got && a->loans.registry && a->loans.registry->lowest() != a->published_lowest) {
        publish_progress(*a);
      }
      delivered = got || delivered;
      refused = refused || a->refused;
    }
    if (Clock::now() >= next_check) {
      check_writers(list);
      next_check = Clock::now() + kWriterCheckPeriod;
    }
    if (delivered) continue;
    // Nothing new: spin a little (a writer's next sample is often microseconds away), then sleep
    // until a writer rings.
    const auto spin_end = Clock::now() + spin_;
    while (Clock::now() < spin_end && bell.seq.load(std::memory_order_relaxed) == seq) {
    }
    if (bell.seq.load(std::memory_order_seq_cst) != seq) continue;
    bell.waiters.fetch_add(1, std::memory_order_seq_cst);
    if (bell.seq.load(std::memory_order_seq_cst) == seq) {
      futex_wait(bell.seq, seq, refused ? Duration(kRetrySleep) : Duration(kIdleSleep));
    }
    bell.waiters.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace pubsub::shm
