// UdpTransport's send side (udp_transport_impl.hpp has the overview): send() and send_many() on
// the caller's thread, any thread at once; they touch only the send socket (sendmsg and
// sendmmsg are thread-safe), their stack and atomic counters. Runs of equal-sized datagrams
// leave as one UDP_SEGMENT message while the kernel accepts it.
#include "udp_transport_impl.hpp"

namespace pubsub::detail {

void UdpTransport::send(std::span<const Locator> to, std::span<const ConstBuffer> parts) {
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

void UdpTransport::send_many(std::span<const Locator> to,
                             std::span<const std::span<const ConstBuffer>> datagrams) {
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

void UdpTransport::send_group(sockaddr_in& sa,
                              std::span<const std::span<const ConstBuffer>> datagrams, bool gso) {
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
    const int r =
        ::sendmmsg(user_uc_.native_handle(), g.msgs + done, static_cast<unsigned>(nmsg - done), 0);
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

void UdpTransport::finish_message(SendGroup& g, size_t i, size_t seg, size_t run, size_t bytes) {
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

void UdpTransport::count_sent(size_t datagrams, size_t bytes) {
  sent_.fetch_add(datagrams, std::memory_order_relaxed);
  sent_bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace pubsub::detail
