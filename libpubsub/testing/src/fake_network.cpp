// FakeNetwork: an in-process datagram network with seeded fault injection.
//
// Ownership and threads:
// - The network owns a queue of datagrams in flight (copies), ordered by delivery time, and one
//   delivery thread that pops due datagrams and hands each to its destination's receiver.
// - Transports register while started. send() (any thread) decides the fate of each copy
//   (drop, duplicate, delay) under the network mutex and enqueues it; it never delivers inline,
//   so a receiver that sends from its callback cannot deadlock.
// - stop() unregisters the transport and waits until the delivery thread is not inside its
//   receiver, so the receiver may be destroyed afterwards.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <queue>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pubsub/testing/fake_network.hpp"
#include "wire/constants.hpp"
#include "wire/message.hpp"

namespace pubsub {
namespace {

using Clock = std::chrono::steady_clock;

class FakeTransport;

class FakeNetworkImpl final : public FakeNetwork,
                              public std::enable_shared_from_this<FakeNetworkImpl> {
 public:
  explicit FakeNetworkImpl(FaultOptions f) : faults_(f), rng_(f.seed) {
    thread_ = std::thread([this] { run(); });
  }
  ~FakeNetworkImpl() override {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::unique_ptr<Transport> make_transport(size_t max_message_size) override;
  void set_faults(const FaultOptions& f) override {
    std::lock_guard lk(mu_);
    faults_ = f;
    rng_.seed(f.seed);
  }
  FakeNetworkStats stats() const override {
    std::lock_guard lk(mu_);
    return stats_;
  }

  void attach(FakeTransport* t) {
    std::lock_guard lk(mu_);
    members_.push_back(t);
  }
  void detach(FakeTransport* t) {
    std::unique_lock lk(mu_);
    members_.erase(std::remove(members_.begin(), members_.end(), t), members_.end());
    idle_cv_.wait(lk, [&] { return delivering_to_ != t; });
  }
  void send(FakeTransport* from, std::span<const Locator> to, std::span<const ConstBuffer> parts);
  bool is_delivery_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  size_t unfragmented_message_size() const {
    std::lock_guard lk(mu_);
    return faults_.unfragmented_message_size;
  }
  uint32_t next_address() { return 0xC6126400u + next_host_.fetch_add(1); }  // 198.18.100.x

 private:
  struct InFlight {
    Clock::time_point at;
    uint64_t order;
    FakeTransport* dest;
    std::vector<uint8_t> data;
    bool operator>(const InFlight& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  void enqueue_locked(FakeTransport* dest, const std::vector<uint8_t>& data, Clock::time_point now);
  void run();

  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  FaultOptions faults_;
  std::mt19937_64 rng_;
  std::vector<FakeTransport*> members_;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> queue_;
  uint64_t order_ = 0;
  FakeTransport* delivering_to_ = nullptr;
  bool stopping_ = false;
  FakeNetworkStats stats_;
  // receive_rate: when each receiver will have taken in what was queued for it so far.
  std::unordered_map<FakeTransport*, Clock::time_point> drained_at_;
  std::atomic<uint32_t> next_host_{1};
  std::thread thread_;
};

class FakeTransport final : public Transport {
 public:
  FakeTransport(std::shared_ptr<FakeNetworkImpl> net, size_t max_message)
      : net_(std::move(net)), max_message_(max_message ? max_message : 8972) {
    const uint32_t ip = net_->next_address();
    loc_.meta_unicast = Locator::udp_v4(ip, 7410);
    loc_.user_unicast = Locator::udp_v4(ip, 7411);
    loc_.meta_multicast = Locator::udp_v4(wire::kDefaultMulticastGroup, 7400);
    loc_.user_multicast = Locator::udp_v4(wire::kDefaultMulticastGroup, 7401);
    loc_.spdp_destinations.push_back(*loc_.meta_multicast);
  }
  ~FakeTransport() override { stop(); }

  Result<void> start(TransportReceiver& r) override {
    receiver_ = &r;
    started_ = true;
    net_->attach(this);
    return {};
  }
  void stop() override {
    if (started_.exchange(false)) net_->detach(this);
  }
  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override {
    net_->send(this, to, parts);
    std::lock_guard lk(stats_mu_);
    for (const auto& p : parts) stats_.bytes_sent += p.size * to.size();
    stats_.datagrams_sent += to.size();
  }
  const TransportLocators& locators() const override { return loc_; }
  size_t max_message_size() const override { return max_message_; }
  size_t unfragmented_message_size() const override {
    const size_t u = net_->unfragmented_message_size();
    return u ? std::min(u, max_message_) : max_message_;
  }
  bool on_receive_thread() const override { return net_->is_delivery_thread(); }
  TransportStats stats() const override {
    std::lock_guard lk(stats_mu_);
    return stats_;
  }

  bool reachable_at(const Locator& l) const {
    return l == loc_.meta_unicast || l == loc_.user_unicast || l == *loc_.meta_multicast ||
           l == *loc_.user_multicast;
  }
  void deliver(const std::vector<uint8_t>& d) {
    {
      std::lock_guard lk(stats_mu_);
      stats_.datagrams_received++;
      stats_.bytes_received += d.size();
    }
    receiver_->on_datagram(0, d.data(), d.size());
    receiver_->on_receive_batch_end(0);
  }

 private:
  std::shared_ptr<FakeNetworkImpl> net_;
  size_t max_message_;
  TransportLocators loc_;
  TransportReceiver* receiver_ = nullptr;
  std::atomic<bool> started_{false};
  mutable std::mutex stats_mu_;
  TransportStats stats_;
};

std::unique_ptr<Transport> FakeNetworkImpl::make_transport(size_t max_message_size) {
  return std::make_unique<FakeTransport>(shared_from_this(), max_message_size);
}

void FakeNetworkImpl::send(FakeTransport* /*from*/, std::span<const Locator> to,
                           std::span<const ConstBuffer> parts) {
  std::vector<uint8_t> data;
  size_t total = 0;
  for (const auto& p : parts) total += p.size;
  data.reserve(total);
  for (const auto& p : parts) {
    const auto* b = static_cast<const uint8_t*>(p.data);
    data.insert(data.end(), b, b + p.size);
  }
  const auto now = Clock::now();
  std::lock_guard lk(mu_);
  for (const Locator& l : to) {
    for (FakeTransport* m : members_) {
      // Multicast loops back to the sender as on a real host; unicast reaches the owner.
      if (!m->reachable_at(l)) continue;
      enqueue_locked(m, data, now);
    }
  }
  cv_.notify_one();
}

// Whether a datagram carries a user writer's DATA or DATA_FRAG (kind bit 0xc0 clear: not a
// builtin discovery endpoint): a duplicate of it must show as a duplicate at the reader.
bool carries_user_data(const std::vector<uint8_t>& datagram) {
  struct Finder : wire::Visitor {
    bool found = false;
    void on_data(const wire::ReceiveContext&, const wire::DataSubmessage& m) override {
      found |= (m.writer_id.kind() & 0xc0) == 0;
    }
    void on_data_frag(const wire::ReceiveContext&, const wire::DataFragSubmessage& m) override {
      found |= (m.writer_id.kind() & 0xc0) == 0;
    }
  } finder;
  (void)wire::decode_message(datagram.data(), datagram.size(), wire::DecodeLimits{}, finder);
  return finder.found;
}

void FakeNetworkImpl::enqueue_locked(FakeTransport* dest, const std::vector<uint8_t>& data,
                                     Clock::time_point now) {
  if (faults_.tap) faults_.tap(data.data(), data.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng_) < faults_.drop) {
    stats_.dropped++;
    return;
  }
  Clock::time_point drained = now;
  if (faults_.receive_rate > 0) {  // a socket buffer drained at receive_rate
    auto& until = drained_at_[dest];
    until = std::max(until, now);
    const double waiting =
        std::chrono::duration<double>(until - now).count() * faults_.receive_rate;
    if (faults_.receive_buffer_bytes && waiting + static_cast<double>(data.size()) >
                                            static_cast<double>(faults_.receive_buffer_bytes)) {
      stats_.overflowed++;
      return;
    }
    until += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(static_cast<double>(data.size()) / faults_.receive_rate));
    drained = until;
  }
  const int copies = u(rng_) < faults_.duplicate ? 2 : 1;
  if (copies == 2) {
    stats_.duplicated++;
    if (carries_user_data(data)) stats_.duplicated_user_data++;
  }
  for (int c = 0; c < copies; ++c) {
    auto at = std::max(now + faults_.latency, drained);
    if (u(rng_) < faults_.reorder) {
      stats_.reordered++;
      at += std::chrono::nanoseconds(
          static_cast<int64_t>(u(rng_) * static_cast<double>(faults_.max_reorder_delay.count())));
    }
    queue_.push(InFlight{at, order_++, dest, data});
  }
}

void FakeNetworkImpl::run() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lk);
      continue;
    }
    const auto at = queue_.top().at;
    if (at > Clock::now()) {
      cv_.wait_until(lk, at);
      continue;
    }
    InFlight d = std::move(const_cast<InFlight&>(queue_.top()));
    queue_.pop();
    if (std::find(members_.begin(), members_.end(), d.dest) == members_.end()) continue;
    stats_.delivered++;
    delivering_to_ = d.dest;
    lk.unlock();
    d.dest->deliver(d.data);
    lk.lock();
    delivering_to_ = nullptr;
    idle_cv_.notify_all();
  }
}

}  // namespace

std::shared_ptr<FakeNetwork> FakeNetwork::create(FaultOptions faults) {
  return std::make_shared<FakeNetworkImpl>(faults);
}

}  // namespace pubsub
