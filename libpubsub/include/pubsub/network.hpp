// The host's network interfaces as a participant chooses among them (ParticipantOptions::
// interface): up, with an IPv4 address. For tools that check a configuration before they start
// a participant (pubsub-recorder --check-config) and for error messages that list what exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pubsub/basics.hpp"

namespace pubsub {

struct NetworkInterface {
  std::string name;
  uint32_t address = 0;  // IPv4, host order
  bool multicast = false;
  bool loopback = false;
  int mtu = 1500;

  std::string address_text() const;  // "198.18.0.2"
};

// Every interface that is up with an IPv4 address, in the order the kernel lists them (one entry
// per address).
Result<std::vector<NetworkInterface>> network_interfaces();

// The interface `wanted` names (an interface name or an IPv4 address of this host); "" = the
// first up, multicast-capable, non-loopback one (else the first non-loopback, else loopback).
// kNotFound when none matches: "no network interface 'eth7' that is up with an IPv4 address
// (there are: lo 127.0.0.1, eth0 10.0.0.2)".
Result<NetworkInterface> find_network_interface(const std::string& wanted);

}  // namespace pubsub
