// UdpTransport's receive workers (udp_transport_impl.hpp has the overview): worker 1 blocks in
// recvmmsg on the user unicast socket, worker 0 waits on an epoll set of the other sockets; each
// owns its buffers, lends datagrams to the TransportReceiver and ends each batch.
#include "udp_transport_impl.hpp"

namespace pubsub::detail {

void UdpTransport::deliver(unsigned worker, RecvBatch& batch, int got) {
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

void UdpTransport::receive_loop() {
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

void UdpTransport::data_loop() {
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

}  // namespace pubsub::detail
