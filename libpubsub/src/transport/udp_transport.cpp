// UDP transport: Boost.Asio sockets for setup (bind, multicast membership, buffer sizes), the
// native handles for the hot path (recvmmsg on receive, sendmsg with a gather list on send).
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

namespace pubsub {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

using Interface = NetworkInterface;

// The largest datagram IP sends in one packet of this MTU (IPv4 and UDP headers off), kept
// within what the transport accepts.
size_t mtu_payload(int mtu) {
  return std::clamp<size_t>(static_cast<size_t>(mtu) - 28, 1024, 65000);
}

sockaddr_in to_sockaddr(const Locator& l) {
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

  Result<void> open() {
    auto itf = find_network_interface(options_.interface);
    if (!itf) return itf.error();
    itf_ = itf.value();
    unfragmented_ = mtu_payload(itf_.mtu);
    batch_message_size_ = options_.max_message_size;
    if (options_.max_message_size == 0) {
      options_.max_message_size = unfragmented_;
      batch_message_size_ = default_batch_message_size(itf_.mtu);  // >= unfragmented_
    }
    const bool multicast = options_.multicast && itf_.multicast;
    const auto domain = options_.domain_id;
    if (wire::spdp_multicast_port(domain) > 65535 - 300) {
      return make_error(ErrorCode::kInvalidArgument, "domain id too large for the port mapping");
    }

    // Unicast ports: the first participant index whose two ports are both free.
    const int first_id = options_.participant_id < 0 ? 0 : options_.participant_id;
    const int last_id = options_.participant_id < 0 ? 119 : options_.participant_id;
    boost::system::error_code ec;
    int id = first_id;
    for (; id <= last_id; ++id) {
      if (bind_unicast(meta_uc_, wire::meta_unicast_port(domain, id)) &&
          bind_unicast(user_uc_, wire::user_unicast_port(domain, id))) {
        break;
      }
      meta_uc_.close(ec);
      user_uc_.close(ec);
    }
    if (id > last_id) {
      return make_error(ErrorCode::kNetwork, "no free unicast port pair for domain " +
                                                 std::to_string(domain) + " (participant ids " +
                                                 std::to_string(first_id) + ".." +
                                                 std::to_string(last_id) + ")");
    }
    participant_id_ = id;
    locators_.meta_unicast = Locator::udp_v4(itf_.address, wire::meta_unicast_port(domain, id));
    locators_.user_unicast = Locator::udp_v4(itf_.address, wire::user_unicast_port(domain, id));

    // Sending goes through the user unicast socket.
    const int fd = user_uc_.native_handle();
    const in_addr out_if{htonl(itf_.address)};
    ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &out_if, sizeof out_if);
    const int ttl = options_.multicast_ttl, loop = 1;
    ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
    ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, options_.send_buffer_bytes);
    if (options_.segmentation_offload) {
      // A kernel without UDP GSO refuses the option; then datagrams leave one by one.
      const int zero = 0;
      gso_ = ::setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
    }

    if (multicast) {
      const uint32_t group = wire::kDefaultMulticastGroup;
      if (auto r = open_multicast(spdp_mc_, group, wire::spdp_multicast_port(domain)); !r) return r;
      if (auto r = open_multicast(user_mc_, group, wire::user_multicast_port(domain)); !r) return r;
      locators_.meta_multicast = Locator::udp_v4(group, wire::spdp_multicast_port(domain));
      locators_.user_multicast = Locator::udp_v4(group, wire::user_multicast_port(domain));
      locators_.spdp_destinations.push_back(*locators_.meta_multicast);
    } else {
      // Without multicast, SPDP goes to the first unicast ports of this host (as Cyclone does).
      for (int i = 0; i < 10; ++i) {
        locators_.spdp_destinations.push_back(
            Locator::udp_v4(itf_.address, wire::meta_unicast_port(domain, i)));
      }
    }
    for (uint32_t peer : options_.peers) {
      for (int i = 0; i < 10; ++i) {
        locators_.spdp_destinations.push_back(
            Locator::udp_v4(peer, wire::meta_unicast_port(domain, i)));
      }
    }
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) return make_error(ErrorCode::kNetwork, "eventfd failed");
    return {};
  }

  Result<void> start(TransportReceiver& receiver) override {
    receiver_ = &receiver;
    running_ = true;
    thread_ = std::thread([this] { receive_loop(); });
    data_thread_ = std::thread([this] { data_loop(); });
    return {};
  }

  void stop() override {
    if (!running_.exchange(false)) return;
    const uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    // Wakes the blocked recvmmsg of the data worker (the socket still sends).
    ::shutdown(user_uc_.native_handle(), SHUT_RD);
    if (thread_.joinable()) thread_.join();
    if (data_thread_.joinable()) data_thread_.join();
  }

  void send(std::span<const Locator> to, std::span<const ConstBuffer> parts) override {
    iovec iov[16];
    const size_t n = std::min<size_t>(parts.size(), 16);
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      iov[i].iov_base = const_cast<void*>(parts[i].data);
      iov[i].iov_len = parts[i].size;
      bytes += parts[i].size;
    }
    for (const Locator& l : to) {
      if (l.kind != Locator::kUdpV4) continue;
      sockaddr_in sa = to_sockaddr(l);
      msghdr msg{};
      msg.msg_name = &sa;
      msg.msg_namelen = sizeof sa;
      msg.msg_iov = iov;
      msg.msg_iovlen = n;
      ssize_t r;
      do {
        r = ::sendmsg(user_uc_.native_handle(), &msg, 0);
      } while (r < 0 && errno == EINTR);
      if (r < 0) {
        send_errors_.fetch_add(1, std::memory_order_relaxed);
      } else {
        sent_.fetch_add(1, std::memory_order_relaxed);
        sent_bytes_.fetch_add(bytes, std::memory_order_relaxed);
      }
    }
  }

  void send_many(std::span<const Locator> to,
                 std::span<const std::span<const ConstBuffer>> datagrams) override {
    for (const Locator& l : to) {
      if (l.kind != Locator::kUdpV4) continue;
      sockaddr_in sa = to_sockaddr(l);
      for (size_t first = 0; first < datagrams.size(); first += kMaxDatagrams) {
        const auto group =
            datagrams.subspan(first, std::min(kMaxDatagrams, datagrams.size() - first));
        send_group(sa, group, gso_.load(std::memory_order_relaxed));
      }
    }
  }

  const TransportLocators& locators() const override { return locators_; }
  size_t max_message_size() const override { return options_.max_message_size; }
  size_t batch_message_size() const override { return batch_message_size_; }
  size_t unfragmented_message_size() const override {
    return std::min(options_.max_message_size, unfragmented_);
  }
  bool on_receive_thread() const override {
    const auto me = std::this_thread::get_id();
    return me == thread_id_.load(std::memory_order_relaxed) ||
           me == data_thread_id_.load(std::memory_order_relaxed);
  }
  TransportStats stats() const override {
    TransportStats s;
    s.datagrams_sent = sent_.load(std::memory_order_relaxed);
    s.bytes_sent = sent_bytes_.load(std::memory_order_relaxed);
    s.send_errors = send_errors_.load(std::memory_order_relaxed);
    s.datagrams_received = received_.load(std::memory_order_relaxed);
    s.bytes_received = received_bytes_.load(std::memory_order_relaxed);
    s.gso_messages_sent = gso_sent_.load(std::memory_order_relaxed);
    s.gro_messages_received = gro_received_.load(std::memory_order_relaxed);
    s.coalescing_sleeps = coalescing_sleeps_.load(std::memory_order_relaxed);
    return s;
  }

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
                  bool gso) {
    SendGroup g;  // on the stack: send_many runs on any thread
    size_t nmsg = 0, niov = 0;
    size_t seg = 0, run = 0, run_bytes = 0;  // the open run: segment size, datagrams, bytes
    bool run_closed = true;
    for (const auto& parts : datagrams) {
      size_t size = 0;
      const size_t np = std::min(parts.size(), kMaxParts);
      for (size_t k = 0; k < np; ++k) size += parts[k].size;
      const bool joins = gso && !run_closed && size <= seg && run_bytes + size <= kMaxGsoBytes;
      if (!joins) {
        if (nmsg > 0) finish_message(g, nmsg - 1, seg, run, run_bytes);
        g.msgs[nmsg] = mmsghdr{};
        g.msgs[nmsg].msg_hdr.msg_name = &sa;
        g.msgs[nmsg].msg_hdr.msg_namelen = sizeof sa;
        g.msgs[nmsg].msg_hdr.msg_iov = g.iov + niov;
        ++nmsg;
        seg = size;
        run = 0;
        run_bytes = 0;
        run_closed = size > unfragmented_;  // only datagrams of one packet are segments
      }
      for (size_t k = 0; k < np; ++k) {
        g.iov[niov].iov_base = const_cast<void*>(parts[k].data);
        g.iov[niov++].iov_len = parts[k].size;
      }
      g.msgs[nmsg - 1].msg_hdr.msg_iovlen += np;
      ++run;
      run_bytes += size;
      if (size < seg) run_closed = true;  // a shorter datagram ends a run
    }
    if (nmsg == 0) return;
    finish_message(g, nmsg - 1, seg, run, run_bytes);
    size_t done = 0, datagrams_done = 0, bytes_done = 0;
    while (done < nmsg) {
      const int r = ::sendmmsg(user_uc_.native_handle(), g.msgs + done,
                               static_cast<unsigned>(nmsg - done), 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (g.datagrams_in[done] > 1 && (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP)) {
          gso_.store(false, std::memory_order_relaxed);
          // The rest goes again without segmentation offload.
          count_sent(datagrams_done, bytes_done);
          send_group(sa, datagrams.subspan(datagrams_done), false);
          return;
        }
        send_errors_.fetch_add(datagrams.size() - datagrams_done, std::memory_order_relaxed);
        break;
      }
      for (int i = 0; i < r; ++i) {
        datagrams_done += g.datagrams_in[done + i];
        bytes_done += g.bytes_in[done + i];
        if (g.datagrams_in[done + i] > 1) gso_sent_.fetch_add(1, std::memory_order_relaxed);
      }
      done += static_cast<size_t>(r);
    }
    count_sent(datagrams_done, bytes_done);
  }

  // Closes message i of a send group: `run` datagrams of `seg` bytes (the last may be shorter),
  // `bytes` in all.
  static void finish_message(SendGroup& g, size_t i, size_t seg, size_t run, size_t bytes) {
    g.datagrams_in[i] = run;
    g.bytes_in[i] = bytes;
    msghdr& h = g.msgs[i].msg_hdr;
    if (run < 2) return;
    h.msg_control = g.control[i];
    h.msg_controllen = sizeof g.control[i];
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    const uint16_t size = static_cast<uint16_t>(seg);
    std::memcpy(CMSG_DATA(c), &size, sizeof size);
  }

  void count_sent(size_t datagrams, size_t bytes) {
    sent_.fetch_add(datagrams, std::memory_order_relaxed);
    sent_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

  static void set_buffer(int fd, int force_opt, int opt, size_t bytes) {
    const int v = static_cast<int>(bytes);
    if (::setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0) {
      ::setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
    }
  }

  // UDP_GRO: the kernel may hand a run of datagrams of one size over as one (deliver() splits
  // it), as it arrives from a sender using UDP_SEGMENT. Without the option (or on a kernel
  // without it) the kernel splits them itself.
  void enable_gro(int fd) const {
    if (!options_.segmentation_offload) return;
    const int one = 1;
    ::setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
  }

  bool bind_unicast(udp::socket& s, uint32_t port) {
    boost::system::error_code ec;
    s.open(udp::v4(), ec);
    if (ec) return false;
    s.bind(udp::endpoint(asio::ip::address_v4::any(), static_cast<uint16_t>(port)), ec);
    if (ec) return false;
    set_buffer(s.native_handle(), SO_RCVBUFFORCE, SO_RCVBUF, options_.receive_buffer_bytes);
    enable_gro(s.native_handle());
    return true;
  }

  Result<void> open_multicast(udp::socket& s, uint32_t group, uint32_t port) {
    boost::system::error_code ec;
    s.open(udp::v4(), ec);
    if (!ec) s.set_option(udp::socket::reuse_address(true), ec);
    const int one = 1, zero = 0;
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    // Only the groups joined on this socket, not every group joined on the host.
    ::setsockopt(s.native_handle(), IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero);
    if (!ec) s.bind(udp::endpoint(asio::ip::address_v4::any(), static_cast<uint16_t>(port)), ec);
    if (!ec) {
      s.set_option(asio::ip::multicast::join_group(asio::ip::address_v4(group),
                                                   asio::ip::address_v4(itf_.address)),
                   ec);
    }
    if (ec) {
      return make_error(ErrorCode::kNetwork, "multicast socket on port " + std::to_string(port) +
                                                 " (interface " + itf_.name + "): " + ec.message());
    }
    set_buffer(s.native_handle(), SO_RCVBUFFORCE, SO_RCVBUF, options_.receive_buffer_bytes);
    enable_gro(s.native_handle());
    return {};
  }

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
  void deliver(unsigned worker, RecvBatch& batch, int got) {
    size_t bytes = 0, datagrams = 0, coalesced = 0;
    for (int i = 0; i < got; ++i) {
      const size_t len = batch.msgs[i].msg_len;
      // Empty: no RTPS message (also what recvmmsg reports after stop() shuts the socket).
      if (len == 0) continue;
      const auto* data = static_cast<const uint8_t*>(batch.iovs[i].iov_base);
      size_t seg = batch.segment_size(i);
      if (seg == 0 || seg >= len) seg = len;
      coalesced += seg < len;
      for (size_t off = 0; off < len; off += seg) {
        receiver_->on_datagram(worker, data + off, std::min(seg, len - off));
        ++datagrams;
      }
      bytes += len;
    }
    batch.rearm(static_cast<size_t>(got));
    received_.fetch_add(datagrams, std::memory_order_relaxed);
    if (coalesced) gro_received_.fetch_add(coalesced, std::memory_order_relaxed);
    received_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    receiver_->on_receive_batch_end(worker);
  }

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

  void receive_loop() {
    thread_id_.store(std::this_thread::get_id());
    RecvBatch batch;
    // One epoll set, registered once (poll() would re-register every socket on each wake-up).
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    int fds[5];
    size_t nfds = 0;
    for (udp::socket* s : {&meta_uc_, &spdp_mc_, &user_mc_}) {
      if (s->is_open()) fds[nfds++] = s->native_handle();
    }
    fds[nfds++] = wake_fd_;
    for (size_t i = 0; i < nfds; ++i) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fds[i];
      ::epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
    epoll_event ready[5];
    const auto spin = options_.receive_spin;
    Coalescer coalescer{options_.receive_coalesce, coalescing_sleeps_};
    auto last_data = std::chrono::steady_clock::time_point{};
    while (running_.load(std::memory_order_relaxed)) {
      // Spin (poll without sleeping) for a while after traffic, then block.
      const bool spinning = spin.count() > 0 && std::chrono::steady_clock::now() - last_data < spin;
      const int r = ::epoll_wait(ep, ready, 5, spinning ? 0 : 1000);
      if (r <= 0) continue;
      last_data = std::chrono::steady_clock::now();
      size_t messages = 0;
      bool emptied = true;
      for (int k = 0; k < r; ++k) {
        const int fd = ready[k].data.fd;
        if (fd == wake_fd_) continue;
        // Drain a bounded number of batches per socket so one busy socket cannot starve others.
        bool empty = false;
        for (int rounds = 0; rounds < 8 && !empty; ++rounds) {
          const int got = ::recvmmsg(fd, batch.msgs, kBatch, MSG_DONTWAIT, nullptr);
          empty = got < static_cast<int>(kBatch);
          if (got <= 0) break;
          deliver(0, batch, got);
          messages += static_cast<size_t>(got);
        }
        emptied = emptied && empty;
      }
      coalescer.after(messages, emptied);
    }
    ::close(ep);
  }

  // Worker 1: the user unicast socket, blocking (ends when stop() shuts its read side).
  void data_loop() {
    data_thread_id_.store(std::this_thread::get_id());
    RecvBatch batch;
    const int fd = user_uc_.native_handle();
    Coalescer coalescer{options_.receive_coalesce, coalescing_sleeps_};
    while (running_.load(std::memory_order_relaxed)) {
      const int got = ::recvmmsg(fd, batch.msgs, kBatch, MSG_WAITFORONE, nullptr);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        if (!running_.load(std::memory_order_relaxed)) break;
        continue;
      }
      deliver(1, batch, got);
      coalescer.after(static_cast<size_t>(got), static_cast<size_t>(got) < kBatch);
    }
  }

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

}  // namespace

size_t default_batch_message_size(int mtu) {
  constexpr size_t kCycloneMessage = 14720, kMax = 65000;
  const size_t ip_payload = static_cast<size_t>(std::max(mtu, 576)) - 20;  // per packet
  const size_t fragment = ip_payload & ~size_t{7};  // IP fragment payloads are 8-byte multiples
  const size_t packets = (kCycloneMessage + 80) / fragment;  // 10 at MTU 1500
  if (packets <= 1) return mtu_payload(mtu);
  return std::min(packets * fragment - 8, kMax);
}

Result<std::unique_ptr<Transport>> make_udp_transport(const UdpTransportOptions& options) {
  if (options.max_message_size != 0 &&
      (options.max_message_size < 1024 || options.max_message_size > 65000)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "max_message_size must be 0 (auto) or 1024..65000");
  }
  auto t = std::make_unique<UdpTransport>(options);
  if (auto r = t->open(); !r) return r.error();
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace pubsub
