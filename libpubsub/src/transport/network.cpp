// The host's interfaces (pubsub/network.hpp), through getifaddrs(3); the MTU through
// SIOCGIFMTU.
#include "pubsub/network.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace pubsub {
namespace {

int interface_mtu(const std::string& name) {
  ifreq req{};
  std::strncpy(req.ifr_name, name.c_str(), IFNAMSIZ - 1);
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  int mtu = 1500;
  if (fd >= 0 && ::ioctl(fd, SIOCGIFMTU, &req) == 0) mtu = req.ifr_mtu;
  if (fd >= 0) ::close(fd);
  return mtu;
}

}  // namespace

std::string NetworkInterface::address_text() const {
  in_addr a{};
  a.s_addr = htonl(address);
  char b[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, b, sizeof b);
  return b;
}

Result<std::vector<NetworkInterface>> network_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return make_error(ErrorCode::kNetwork, std::string("getifaddrs: ") + std::strerror(errno));
  }
  std::vector<NetworkInterface> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    NetworkInterface c;
    c.name = i->ifa_name;
    c.address = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    c.multicast = i->ifa_flags & IFF_MULTICAST;
    c.loopback = i->ifa_flags & IFF_LOOPBACK;
    out.push_back(std::move(c));
  }
  freeifaddrs(list);
  return out;
}

Result<NetworkInterface> find_network_interface(const std::string& wanted) {
  auto all = network_interfaces();
  if (!all) return all.error();
  std::optional<NetworkInterface> found, loopback;
  in_addr wanted_addr{};
  const bool by_address = !wanted.empty() && inet_pton(AF_INET, wanted.c_str(), &wanted_addr) == 1;
  for (const auto& c : *all) {
    if (wanted.empty()) {
      if (c.loopback) {
        if (!loopback) loopback = c;
      } else if (!found || (!found->multicast && c.multicast)) {
        found = c;
      }
    } else if ((by_address && c.address == ntohl(wanted_addr.s_addr)) || c.name == wanted) {
      found = c;
      break;
    }
  }
  if (!found && wanted.empty()) found = loopback;
  if (!found) {
    std::string there;
    for (const auto& c : *all)
      there += (there.empty() ? "" : ", ") + c.name + " " + c.address_text();
    return make_error(ErrorCode::kNotFound,
                      "no network interface '" + wanted + "' that is up with an IPv4 address (" +
                          (there.empty() ? std::string("there is none") : "there are: " + there) +
                          ")");
  }
  found->mtu = interface_mtu(found->name);
  return *found;
}

}  // namespace pubsub
