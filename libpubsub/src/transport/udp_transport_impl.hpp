// UDP transport (internal): Boost.Asio sockets for setup (bind, multicast membership, buffer
// sizes), the native handles for the hot path (recvmmsg on receive, sendmsg with a gather list on
// send).
//
// Ownership and threads:
// - The transport owns up to four sockets: metatraffic unicast, user unicast (also the send
//   socket), SPDP multicast and user-data multicast, plus an eventfd that wakes the receive
//   thread at stop().
// - Two receive threads (workers), each with a fixed set of buffers it owns, lend datagrams to
//   the TransportReceiver and call on_receive_batch_end() after each recvmmsg batch:
//   worker 1 blocks in recvmmsg(MSG_WAITFORONE) on the user unicast socket, where most data
//   arrives (one system call per wake-up, which also keeps round trips steady); worker 0 waits
//   on an epoll set of the other sockets (metatraffic unicast, SPDP and data multicast).
// - send() and send_many() run on the caller's thread and touch only the send socket (sendmsg
//   and sendmmsg are thread-safe), their stack and atomic counters.
// - Segmentation offload (on unless options say otherwise): send_many() puts runs of
//   equal-sized one-packet datagrams (a large sample's fragments) into one UDP_SEGMENT message,
//   which the kernel cuts into datagrams after routing; receive sockets set UDP_GRO, and a
//   coalesced run is handed to the receiver datagram by datagram (deliver()).
//
// Files: udp_transport_impl.hpp (this: the class and its state), udp_transport.cpp (sockets,
// ports, multicast membership, start/stop, statistics), udp_send.cpp (send, send_many and the
// GSO send groups; caller's thread), udp_receive.cpp (the receive workers).
#pragma once

#include <utility>  // before asio: Boost 1.74's awaitable.hpp uses std::exchange

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <cerrno>
#include <cstring>
#include <thread>

#include "pubsub/network.hpp"
#include "pubsub/transport.hpp"
#include "wire/constants.hpp"

namespace pubsub::detail {

namespace asio = boost::asio;
using asio::ip::udp;

using Interface = NetworkInterface;

// The largest datagram IP sends in one packet of this MTU (IPv4 and UDP headers off), kept
// within what the transport accepts.
inline size_t mtu_payload(int mtu) {
  return std::clamp<size_t>(static_cast<size_t>(mtu) - 28, 1024, 65000);
}

inline sockaddr_in to_sockaddr(const Locator& l) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(l.port));
  sa.sin_addr.s_addr = htonl(l.ipv4());
  return sa;
}

class UdpTransport final : public Transport {
 public:
  explicit UdpTransport(const UdpTransportOptions& o)
      : options_(o), meta_uc_(io_), user_uc_(io_), spdp_mc_(io_), user_mc_(io_) {}

  ~UdpTransport() override {
    stop();
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  Result<void> open();

  Result<void> start(TransportReceiver& receiver) override;

  void stop() override;

  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override;

  void send_many(std::span<const Locator> to,
                 std::span<const std::span<const ConstBuffer>> datagrams) override;

  const TransportLocators& locators() const override { return locators_; }
  size_t max_message_size() const override { return options_.max_message_size; }
  size_t batch_message_size() const override { return batch_message_size_; }
  size_t unfragmented_message_size() const override;
  bool on_receive_thread() const override;
  TransportStats stats() const override;

 private:
  static constexpr size_t kBatch = 32;
  static constexpr size_t kBufferSize = 65536;

  // One sendmmsg's worth of datagrams (send_many): up to kMaxDatagrams, each of up to
  // kMaxParts parts. A UDP GSO message carries at most kMaxDatagrams datagrams (the kernel's
  // UDP_MAX_SEGMENTS is 64 or more) and kMaxGsoBytes (an IP packet's 64 KiB less headers).
  static constexpr size_t kMaxDatagrams = 64, kMaxParts = 4, kMaxGsoBytes = 65000;

  struct SendGroup {
    mmsghdr msgs[kMaxDatagrams];
    iovec iov[kMaxDatagrams * kMaxParts];
    alignas(cmsghdr) char control[kMaxDatagrams][CMSG_SPACE(sizeof(uint16_t))];
    size_t datagrams_in[kMaxDatagrams];  // datagrams each message carries
    size_t bytes_in[kMaxDatagrams];      // and their bytes
  };

  // Sends up to kMaxDatagrams datagrams to one address with one sendmmsg (more if it sends
  // part). With gso, runs of datagrams of one size (the last of a run may be shorter) that fit
  // one packet leave as one message with UDP_SEGMENT: the kernel cuts it into those datagrams
  // after routing, so a 63000-B sample's fragments cost one trip down the stack, and a reader
  // with UDP_GRO gets them back in one piece. When the kernel or the interface refuses
  // segmentation offload, the rest is sent again without it and GSO stays off.
  void send_group(sockaddr_in& sa, std::span<const std::span<const ConstBuffer>> datagrams,
                  bool gso);

  // Closes message i of a send group: `run` datagrams of `seg` bytes (the last may be shorter),
  // `bytes` in all.
  static void finish_message(SendGroup& g, size_t i, size_t seg, size_t run, size_t bytes);

  void count_sent(size_t datagrams, size_t bytes);

  static void set_buffer(int fd, int force_opt, int opt, size_t bytes);

  // UDP_GRO: the kernel may hand a run of datagrams of one size over as one (deliver() splits
  // it), as it arrives from a sender using UDP_SEGMENT. Without the option (or on a kernel
  // without it) the kernel splits them itself.
  void enable_gro(int fd) const;

  bool bind_unicast(udp::socket& s, uint32_t port);

  Result<void> open_multicast(udp::socket& s, uint32_t group, uint32_t port);

  // One worker's recvmmsg buffers: kBatch datagrams of up to kBufferSize bytes, set up once,
  // with room for the UDP_GRO segment size of a coalesced run.
  struct RecvBatch {
    std::vector<uint8_t> storage = std::vector<uint8_t>(kBatch * kBufferSize);
    mmsghdr msgs[kBatch];
    iovec iovs[kBatch];
    alignas(cmsghdr) char control[kBatch][CMSG_SPACE(sizeof(int))];
    RecvBatch() {
      for (size_t i = 0; i < kBatch; ++i) {
        iovs[i].iov_base = storage.data() + i * kBufferSize;
        iovs[i].iov_len = kBufferSize;
        msgs[i] = mmsghdr{};
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      rearm(kBatch);
    }
    // After a recvmmsg that filled n messages: the kernel shrank their msg_controllen to what
    // it wrote.
    void rearm(size_t n) {
      for (size_t i = 0; i < n; ++i) {
        msgs[i].msg_hdr.msg_control = control[i];
        msgs[i].msg_hdr.msg_controllen = sizeof control[i];
      }
    }
    // The datagram size of message i when UDP_GRO coalesced several into it, else 0.
    size_t segment_size(int i) const {
      auto& h = const_cast<msghdr&>(msgs[i].msg_hdr);
      for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
          int size = 0;
          std::memcpy(&size, CMSG_DATA(c), sizeof size);
          return size > 0 ? static_cast<size_t>(size) : 0;
        }
      }
      return 0;
    }
  };

  // Hands the datagrams recvmmsg filled in to the receiver (a coalesced run datagram by
  // datagram), then ends the batch.
  void deliver(unsigned worker, RecvBatch& batch, int got);

  // Receive coalescing (UdpTransportOptions::receive_coalesce): a thread that waits for each
  // datagram is woken once per datagram, and the sender pays for the wake-up (on a VM, most
  // of its system time). Once receives find a queue - two rounds in a row with two or more
  // messages waiting, or one with four - the thread sleeps `delay` after each round that
  // emptied the socket and takes what queued up meanwhile; it waits again as soon as a round
  // finds fewer than two. A round that did not empty the socket is followed by another at once
  // (sleeping then would let the socket overflow). A ping-pong, where a second message (a
  // HEARTBEAT) comes along now and then, does not queue.
  struct Coalescer {
    Duration delay;
    std::atomic<uint64_t>& sleeps;
    size_t previous = 0;  // messages of the previous round
    void after(size_t messages, bool emptied) {
      if (delay.count() <= 0) return;
      const bool busy = messages >= 4 || (messages >= 2 && previous >= 2);
      previous = messages;
      if (!busy || !emptied) return;
      sleeps.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(delay);
    }
  };

  void receive_loop();

  // Worker 1: the user unicast socket, blocking (ends when stop() shuts its read side).
  void data_loop();

  UdpTransportOptions options_;
  asio::io_context io_;
  udp::socket meta_uc_, user_uc_, spdp_mc_, user_mc_;
  Interface itf_;
  int participant_id_ = -1;
  int wake_fd_ = -1;
  TransportLocators locators_;
  TransportReceiver* receiver_ = nullptr;
  std::atomic<bool> running_{false};
  std::thread thread_, data_thread_;
  std::atomic<std::thread::id> thread_id_{}, data_thread_id_{};
  size_t batch_message_size_ = 0;  // set by open()
  size_t unfragmented_ = 0;        // mtu_payload() of the interface, set by open()
  std::atomic<bool> gso_{false};   // UDP_SEGMENT on send (options_.segmentation_offload)
  std::atomic<uint64_t> sent_{0}, sent_bytes_{0}, send_errors_{0}, received_{0}, received_bytes_{0};
  std::atomic<uint64_t> gso_sent_{0}, gro_received_{0}, coalescing_sleeps_{0};
};

}  // namespace pubsub::detail
