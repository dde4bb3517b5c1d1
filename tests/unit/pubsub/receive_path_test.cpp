// The participant's receive path against endpoints that go away while a batch of datagrams is
// being handled. The subscribing participant runs over a GateTransport: a FakeNetwork transport
// whose batch end the test can hold, so that it can remove a reader between the datagrams of one
// batch and its end, exactly where a receive worker once kept a pointer to a freed reader.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>

#include "pubsub/participant.hpp"
#include "test_util.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

constexpr uint8_t kAckNack = 0x06;
constexpr uint8_t kHeartbeat = 0x07;
constexpr uint8_t kFinalFlag = 0x02;

// Calls f(id, flags, body, body_size) for every submessage of an RTPS message.
template <class F>
void for_each_submessage(const uint8_t* d, size_t n, F f) {
  size_t at = 20;  // the RTPS header
  while (at + 4 <= n) {
    const uint8_t id = d[at], flags = d[at + 1];
    const size_t len = (flags & 1) ? d[at + 2] | d[at + 3] << 8 : d[at + 2] << 8 | d[at + 3];
    if (at + 4 + len > n) return;
    f(id, flags, d + at + 4, len);
    if (len == 0) return;  // the last submessage runs to the end of the message
    at += 4 + len;
  }
}

// A user writer's entity id (HEARTBEAT and ACKNACK carry readerId, writerId first): its kind
// byte has neither the builtin nor the vendor bits.
bool user_writer(const uint8_t* body, size_t size) {
  return size >= 8 && (body[7] & 0xc0) == 0;
}

class GateTransport final : public Transport, public TransportReceiver {
 public:
  explicit GateTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}

  // Holds the end of the next batch that carries a user writer's HEARTBEAT asking for an answer.
  void arm() { armed_ = true; }
  bool wait_held() {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, 10s, [&] { return held_; });
  }
  // Lets the held batch end, after handing the receiver its HEARTBEAT once more: the worker
  // then loads the Routes snapshot published since.
  void release() {
    std::lock_guard lk(mu_);
    go_ = true;
    cv_.notify_all();
  }
  int acknacks_to_user_writers() const { return acknacks_; }

  Result<void> start(TransportReceiver& receiver) override {
    receiver_ = &receiver;
    return inner_->start(*this);
  }
  void stop() override { inner_->stop(); }
  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override {
    std::vector<uint8_t> d;
    for (const auto& p : parts) {
      d.insert(d.end(), static_cast<const uint8_t*>(p.data),
               static_cast<const uint8_t*>(p.data) + p.size);
    }
    for_each_submessage(d.data(), d.size(), [&](uint8_t id, uint8_t, const uint8_t* b, size_t n) {
      if (id == kAckNack && user_writer(b, n)) acknacks_++;
    });
    inner_->send(to, parts);
  }
  const TransportLocators& locators() const override { return inner_->locators(); }
  size_t max_message_size() const override { return inner_->max_message_size(); }
  bool on_receive_thread() const override { return inner_->on_receive_thread(); }
  TransportStats stats() const override { return inner_->stats(); }

  void on_datagram(unsigned worker, const uint8_t* data, size_t size) override {
    if (armed_) {
      for_each_submessage(data, size, [&](uint8_t id, uint8_t flags, const uint8_t* b, size_t n) {
        if (id == kHeartbeat && !(flags & kFinalFlag) && user_writer(b, n)) {
          heartbeat_.assign(data, data + size);
        }
      });
    }
    receiver_->on_datagram(worker, data, size);
  }
  void on_receive_batch_end(unsigned worker) override {
    if (armed_ && !heartbeat_.empty()) {
      armed_ = false;
      std::unique_lock lk(mu_);
      held_ = true;
      cv_.notify_all();
      cv_.wait_for(lk, 10s, [&] { return go_; });
      lk.unlock();
      receiver_->on_datagram(worker, heartbeat_.data(), heartbeat_.size());
    }
    receiver_->on_receive_batch_end(worker);
  }

 private:
  std::unique_ptr<Transport> inner_;
  TransportReceiver* receiver_ = nullptr;
  std::atomic<bool> armed_{false};
  std::vector<uint8_t> heartbeat_;  // receive thread only
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, go_ = false;
  std::atomic<int> acknacks_{0};
};

}  // namespace

TEST_CASE(
    "A reader removed while the batch with its HEARTBEAT is handled answers it before it goes") {
  auto net = FakeNetwork::create();
  GateTransport* gate = nullptr;
  auto sub_options = test::fake_options(net);
  sub_options.transport_factory = [&](size_t max) {
    auto t = std::make_unique<GateTransport>(net->make_transport(max));
    gate = t.get();
    return t;
  };
  auto pub = Participant::create(test::fake_options(net));
  auto sub = Participant::create(sub_options);
  REQUIRE(pub);
  REQUIRE(sub);
  REQUIRE(gate);
  const TopicDescription topic{"Gate", "test::Blob", false};
  std::atomic<int> received{0};
  auto reader =
      sub.value()->create_reader(topic, ReaderQos{}, [&](const SampleInfo&, Bytes) { received++; });
  REQUIRE(reader);
  WriterQos wq;
  wq.heartbeat_period = 50ms;  // periodic HEARTBEATs ask for an answer
  auto writer = pub.value()->create_writer(topic, wq);
  REQUIRE(writer);
  REQUIRE(writer.value()->wait_for_readers(1, 10s));
  REQUIRE(reader.value()->wait_for_writers(1, 10s));

  const auto body = test::pattern(1, 100);
  REQUIRE(writer.value()->write(test::as_bytes(body)).ok());
  REQUIRE(test::eventually([&] { return received == 1; }));
  gate->arm();
  REQUIRE(gate->wait_held());
  const int before = gate->acknacks_to_user_writers();
  reader.value().reset();  // the worker's Routes snapshot is now the reader's last owner
  gate->release();
  // The reader marked to answer in the held batch answers at its end: alive until then.
  REQUIRE(test::eventually([&] { return gate->acknacks_to_user_writers() > before; }, 5s));
  REQUIRE(received == 1);
}
