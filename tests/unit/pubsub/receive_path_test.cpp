// The participant's receive path against endpoints that go away while a batch of datagrams is
// being handled. The subscribing participant runs over a GateTransport: a FakeNetwork transport
// whose batch end the test can hold, so that it can remove a reader between the datagrams of one
// batch and its end, exactly where a receive worker once kept a pointer to a freed reader.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>

#include "discovery/discovery.hpp"
#include "pubsub/participant.hpp"
#include "test_util.hpp"
#include "wire/message.hpp"

using namespace pubsub;
using namespace std::chrono_literals;

namespace {

// What one RTPS message carries for the test, read with libpubsub's own decoder: a user
// writer's HEARTBEAT that asks for an answer, and ACKNACKs to user writers.
struct Seen final : wire::Visitor {
  bool heartbeat = false;
  int acknacks = 0;
  void on_heartbeat(const wire::ReceiveContext&, const wire::HeartbeatSubmessage& m) override {
    heartbeat = heartbeat || (!m.final && !discovery::Discovery::is_builtin(m.writer_id));
  }
  void on_acknack(const wire::ReceiveContext&, const wire::AckNackSubmessage& m) override {
    if (!discovery::Discovery::is_builtin(m.writer_id)) ++acknacks;
  }
};

Seen seen_in(const uint8_t* data, size_t size) {
  Seen v;
  (void)wire::decode_message(data, size, wire::DecodeLimits{}, v);
  return v;
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
    const std::vector<uint8_t> d = test::gather(parts);
    acknacks_ += seen_in(d.data(), d.size()).acknacks;
    inner_->send(to, parts);
  }
  const TransportLocators& locators() const override { return inner_->locators(); }
  size_t max_message_size() const override { return inner_->max_message_size(); }
  bool on_receive_thread() const override { return inner_->on_receive_thread(); }
  TransportStats stats() const override { return inner_->stats(); }

  void on_datagram(unsigned worker, const uint8_t* data, size_t size) override {
    if (armed_ && seen_in(data, size).heartbeat) heartbeat_.assign(data, data + size);
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
