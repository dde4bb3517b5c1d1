// UdpTransport's setup (udp_transport_impl.hpp has the overview): the interface, the unicast
// port pair, multicast membership, socket options, the receive threads' start and stop, and the
// statistics. Runs on the thread that creates, starts or stops the participant.
#include "common/thread_name.hpp"
#include "udp_transport_impl.hpp"

namespace pubsub::detail {

Result<void> UdpTransport::open() {
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

Result<void> UdpTransport::start(TransportReceiver& receiver) {
  receiver_ = &receiver;
  running_ = true;
  thread_ = std::thread([this] { receive_loop(); });
  common::name_thread(thread_, "pubsub-recv");  // discovery, multicast data
  data_thread_ = std::thread([this] { data_loop(); });
  common::name_thread(data_thread_, "pubsub-recv-uc");  // unicast data
  return {};
}

void UdpTransport::stop() {
  if (!running_.exchange(false)) return;
  const uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  // Wakes the blocked recvmmsg of the data worker (the socket still sends).
  ::shutdown(user_uc_.native_handle(), SHUT_RD);
  if (thread_.joinable()) thread_.join();
  if (data_thread_.joinable()) data_thread_.join();
}

size_t UdpTransport::unfragmented_message_size() const {
  return std::min(options_.max_message_size, unfragmented_);
}

bool UdpTransport::on_receive_thread() const {
  const auto me = std::this_thread::get_id();
  return me == thread_id_.load(std::memory_order_relaxed) ||
         me == data_thread_id_.load(std::memory_order_relaxed);
}

TransportStats UdpTransport::stats() const {
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

void UdpTransport::set_buffer(int fd, int force_opt, int opt, size_t bytes) {
  const int v = static_cast<int>(bytes);
  if (::setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0) {
    ::setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
  }
}

void UdpTransport::enable_gro(int fd) const {
  if (!options_.segmentation_offload) return;
  const int one = 1;
  ::setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
}

bool UdpTransport::bind_unicast(udp::socket& s, uint32_t port) {
  boost::system::error_code ec;
  s.open(udp::v4(), ec);
  if (ec) return false;
  s.bind(udp::endpoint(asio::ip::address_v4::any(), static_cast<uint16_t>(port)), ec);
  if (ec) return false;
  set_buffer(s.native_handle(), SO_RCVBUFFORCE, SO_RCVBUF, options_.receive_buffer_bytes);
  enable_gro(s.native_handle());
  return true;
}

Result<void> UdpTransport::open_multicast(udp::socket& s, uint32_t group, uint32_t port) {
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

}  // namespace pubsub::detail

namespace pubsub {

size_t default_batch_message_size(int mtu) {
  constexpr size_t kCycloneMessage = 14720, kMax = 65000;
  const size_t ip_payload = static_cast<size_t>(std::max(mtu, 576)) - 20;  // per packet
  const size_t fragment = ip_payload & ~size_t{7};  // IP fragment payloads are 8-byte multiples
  const size_t packets = (kCycloneMessage + 80) / fragment;  // 10 at MTU 1500
  if (packets <= 1) return detail::mtu_payload(mtu);
  return std::min(packets * fragment - 8, kMax);
}

Result<std::unique_ptr<Transport>> make_udp_transport(const UdpTransportOptions& options) {
  if (options.max_message_size != 0 &&
      (options.max_message_size < 1024 || options.max_message_size > 65000)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "max_message_size must be 0 (auto) or 1024..65000");
  }
  auto t = std::make_unique<detail::UdpTransport>(options);
  if (auto r = t->open(); !r) return r.error();
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace pubsub
