// discovery_flood: a hostile peer for the discovery limits' test
// (tests/integration/recorder/discovery_flood.sh). From a plain UDP socket, not a DDS
// participant, it announces on a domain's SPDP multicast group:
//   --participants N   N participants (SPDP), all announcing the IPv4 address --address;
//   --endpoints M      then M writers of the first of them (SEDP publications, sequence numbers
//                      1..M), each on a topic of its own ("flood/<i>", type "Flood"),
// and repeats the SPDP announcements every second for --seconds S so that the participants it
// announced stay alive (lease 300 s). It answers nothing and never acknowledges.
// Exit: 0 sent, 2 bad arguments or no socket.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "wire/constants.hpp"
#include "wire/discovery_data.hpp"
#include "wire/message.hpp"

using namespace pubsub;

namespace {

struct Args {
  uint32_t domain = 0;
  std::string address;  // announced (and the socket's source)
  uint32_t participants = 1;
  uint32_t endpoints = 0;
  int seconds = 10;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    const bool number = !v.empty() && *end == '\0';
    if (k == "--domain" && number && n <= 232) {
      a.domain = static_cast<uint32_t>(n);
    } else if (k == "--address") {
      a.address = v;
    } else if (k == "--participants" && number && n >= 1 && n <= 1000000) {
      a.participants = static_cast<uint32_t>(n);
    } else if (k == "--endpoints" && number && n <= 1000000) {
      a.endpoints = static_cast<uint32_t>(n);
    } else if (k == "--seconds" && number && n <= 3600) {
      a.seconds = static_cast<int>(n);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && !a.address.empty();
}

GuidPrefix prefix_of(uint32_t i) {
  GuidPrefix p{};
  const uint8_t head[4] = {0xf1, 0x00, 0xd0, 0x0d};  // not a vendor's layout: ours alone
  std::memcpy(p.data(), head, 4);
  for (int b = 0; b < 4; ++b) p[8 + b] = static_cast<uint8_t>(i >> (8 * (3 - b)));
  return p;
}

class Sender {
 public:
  Sender(int fd, sockaddr_in to) : fd_(fd), to_(to) {}
  // Appends a DATA of `writer` to the datagram being built; sends it when full.
  void data(const GuidPrefix& from, uint32_t writer, SequenceNumber sn,
            const std::vector<uint8_t>& payload) {
    if (from != from_) flush();
    if (!started_) start(from);
    if (!b_.data(EntityId{wire::kEntityIdUnknown}, EntityId{writer}, sn, {}, payload.data(),
                 payload.size())) {
      flush();
      start(from);
      b_.data(EntityId{wire::kEntityIdUnknown}, EntityId{writer}, sn, {}, payload.data(),
              payload.size());
    }
  }
  void flush() {
    if (!started_) return;
    ::sendto(fd_, buf_.data(), b_.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
    ++sent_;
    started_ = false;
    if (sent_ % 16 == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // no burst loss
  }
  // A HEARTBEAT of `writer` announcing sequence numbers first..last, in a datagram of its own.
  void heartbeat(const GuidPrefix& from, uint32_t writer, SequenceNumber first,
                 SequenceNumber last) {
    flush();
    start(from);
    b_.heartbeat(EntityId{wire::kEntityIdUnknown}, EntityId{writer}, first, last, ++hb_count_,
                 true);
    flush();
  }
  uint64_t sent() const { return sent_; }

 private:
  void start(const GuidPrefix& from) {
    b_ = wire::MessageBuilder(buf_.data(), buf_.size());
    b_.header(from);
    from_ = from;
    started_ = true;
  }
  int fd_;
  sockaddr_in to_;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(8192);
  wire::MessageBuilder b_{nullptr, 0};
  GuidPrefix from_{};
  bool started_ = false;
  uint64_t sent_ = 0;
  uint32_t hb_count_ = 0;
};

std::vector<uint8_t> spdp(const Args& a, uint32_t ip, uint32_t i) {
  wire::ParticipantData p;
  p.guid_prefix = prefix_of(i);
  p.vendor[0] = 0x01;
  p.vendor[1] = 0xfe;
  p.version[0] = wire::kProtocolMajor;
  p.version[1] = wire::kProtocolMinor;
  p.domain_id = a.domain;
  p.builtin_endpoints = wire::kBuiltinParticipantAnnouncer | wire::kBuiltinParticipantDetector |
                        wire::kBuiltinPublicationsAnnouncer | wire::kBuiltinSubscriptionsAnnouncer;
  p.lease_duration = std::chrono::seconds(300);
  const uint32_t port = wire::kPortBase + wire::kDomainGain * a.domain + 10 + 2 * (i % 100);
  p.metatraffic_unicast.push_back(Locator::udp_v4(ip, port));
  p.default_unicast.push_back(Locator::udp_v4(ip, port + 1));
  return wire::encode_participant_data(p);
}

std::vector<uint8_t> sedp_writer(uint32_t j) {
  wire::EndpointData e;
  e.guid.prefix = prefix_of(0);
  e.guid.entity = EntityId{((j + 1) << 8) | 0x03};  // a user writer without key
  e.topic_name = "flood/" + std::to_string(j);
  e.type_name = "Flood";
  e.reliability = ReliabilityKind::kReliable;
  return wire::encode_endpoint_data(e);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  in_addr ip{};
  if (!parse(argc, argv, a) || inet_pton(AF_INET, a.address.c_str(), &ip) != 1) {
    std::fprintf(stderr,
                 "usage: discovery_flood --address IPV4 [--domain D] [--participants N] "
                 "[--endpoints M] [--seconds S]\n");
    return 2;
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr = ip;
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0 ||
      ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ip, sizeof ip) != 0) {
    std::perror("discovery_flood: socket");
    return 2;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(wire::kPortBase + wire::kDomainGain * a.domain));
  to.sin_addr.s_addr = htonl(wire::kDefaultMulticastGroup);
  Sender s(fd, to);
  const uint32_t host_ip = ntohl(ip.s_addr);
  const auto announce_all = [&](SequenceNumber sn) {
    for (uint32_t i = 0; i < a.participants; ++i)
      s.data(prefix_of(i), wire::kEntityIdSpdpWriter, sn, spdp(a, host_ip, i));
    s.flush();
  };
  announce_all(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // proxies exist before SEDP
  if (a.endpoints > 0) {
    // As a writer does: what it has (a reliable reader takes samples from the first announced),
    // the samples, and the announcement again.
    s.heartbeat(prefix_of(0), wire::kEntityIdSedpPubWriter, 1, a.endpoints);
    for (uint32_t j = 0; j < a.endpoints; ++j)
      s.data(prefix_of(0), wire::kEntityIdSedpPubWriter, j + 1, sedp_writer(j));
    s.flush();
    s.heartbeat(prefix_of(0), wire::kEntityIdSedpPubWriter, 1, a.endpoints);
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(a.seconds);
  for (SequenceNumber sn = 2; std::chrono::steady_clock::now() < end; ++sn) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    announce_all(sn);
  }
  std::printf("discovery_flood: %u participants, %u endpoints, %llu datagrams\n", a.participants,
              a.endpoints, static_cast<unsigned long long>(s.sent()));
  ::close(fd);
  return 0;
}
