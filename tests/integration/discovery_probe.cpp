// discovery_probe: joins a domain with a RawReader on every topic and prints discovery events,
// one per line, with the milliseconds since it started:
//   <ms> ready                (listening: the participant and its reader exist)
//   <ms> participant+ <guid prefix> <user data>
//   <ms> writer+ <topic> <writer guid>
//   <ms> writer- <topic> <writer guid>
//   <ms> participant- <guid prefix>
// and at the end "<ms> final participants=N writers=N matched=N". Used by the interop tests to
// time matching and lease expiry, and by the recording-set test as a member that never answers.
// Usage: discovery_probe -nic IFACE -domain D -seconds S [-user-data TEXT]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "pubsub/participant.hpp"

namespace {
std::mutex out_mu;
const auto t0 = std::chrono::steady_clock::now();
long long ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t0)
      .count();
}
std::string prefix_str(const pubsub::GuidPrefix& p) {
  return pubsub::Guid{p, {}}.to_string().substr(0, 24);
}
}  // namespace

int main(int argc, char** argv) {
  pubsub::ParticipantOptions o;
  double seconds = 10;
  o.user_data = "discovery_probe";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-nic")) o.interface = argv[i + 1];
    if (!std::strcmp(argv[i], "-domain"))
      o.domain_id = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "-seconds")) seconds = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "-user-data")) o.user_data = argv[i + 1];
  }
  auto p = pubsub::Participant::create(o);
  if (!p) {
    std::fprintf(stderr, "discovery_probe: %s\n", p.error().message.c_str());
    return 2;
  }
  pubsub::RawReaderListener l;
  l.on_writer_matched = [](const pubsub::TopicInfo& t, const pubsub::WriterInfo& w) {
    std::lock_guard lk(out_mu);
    std::printf("%lld writer+ %s %s\n", ms(), t.name.c_str(), w.guid.to_string().c_str());
    std::fflush(stdout);
  };
  l.on_writer_lost = [](const pubsub::TopicInfo& t, const pubsub::Guid& g,
                        const pubsub::UndeliveredSamples&) {
    std::lock_guard lk(out_mu);
    std::printf("%lld writer- %s %s\n", ms(), t.name.c_str(), g.to_string().c_str());
    std::fflush(stdout);
  };
  l.on_sample = [](const pubsub::RawSample&) { return true; };
  auto raw = p.value()->create_raw_reader({}, l);
  if (!raw) {
    std::fprintf(stderr, "discovery_probe: %s\n", raw.error().message.c_str());
    return 2;
  }
  {
    std::lock_guard lk(out_mu);
    std::printf("%lld ready\n", ms());
    std::fflush(stdout);
  }
  std::map<std::string, std::string> known;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < end) {
    std::map<std::string, std::string> now;
    for (const auto& d : p.value()->discovered_participants())
      now[prefix_str(d.guid_prefix)] = d.user_data;
    std::lock_guard lk(out_mu);
    for (const auto& [k, v] : now) {
      if (!known.count(k)) std::printf("%lld participant+ %s %s\n", ms(), k.c_str(), v.c_str());
    }
    for (const auto& [k, v] : known) {
      if (!now.count(k)) std::printf("%lld participant- %s\n", ms(), k.c_str());
    }
    std::fflush(stdout);
    known = std::move(now);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto s = p.value()->stats();
  std::printf("%lld final participants=%zu writers=%zu readers=%zu matched=%zu\n", ms(),
              s.remote_participants, s.remote_writers, s.remote_readers,
              raw.value()->matched_writers());
  return 0;
}
