// fastdds_qos_peer: the JSON lines on stdout, and the wake-up the main thread waits on.
//
// Lines come from the main thread and from Fast DDS's listener threads at once: emit() writes
// and flushes each line whole under one mutex, and drops every line after close_output() (the
// "done" line is the last). Waker is what the main thread sleeps on: the signal thread stops it
// (SIGINT/SIGTERM), the reader's listener pokes it when samples arrive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include <fastdds/rtps/common/InstanceHandle.h>
#include <fastdds/dds/core/policy/QosPolicies.hpp>

namespace qos_peer {

using Clock = std::chrono::steady_clock;

// One JSON object, built field by field: Json("sample").num("id", 3).str() ->
// {"event":"sample","id":3}. Strings are written as given (only hex and fixed names here).
class Json {
 public:
  explicit Json(const char* event) { text_ = std::string("{\"event\":\"") + event + "\""; }
  Json& num(const char* key, int64_t v) { return field(key, std::to_string(v)); }
  Json& boolean(const char* key, bool v) { return field(key, v ? "true" : "false"); }
  Json& text(const char* key, const std::string& v) { return field(key, "\"" + v + "\""); }
  std::string str() const { return text_ + "}"; }

 private:
  Json& field(const char* key, const std::string& value) {
    text_ += std::string(",\"") + key + "\":" + value;
    return *this;
  }
  std::string text_;
};

void emit(const Json& line);
void close_output();

// A policy id (Fast DDS's QosPolicyId_t) by its DDS name, "UNKNOWN_<id>" for the others.
std::string policy_name(eprosima::fastdds::dds::QosPolicyId_t id);

// A GUID (as Fast DDS's publication handle holds it) as four 32-bit hex groups, the way Cyclone
// prints GUIDs: "1f0a3b2c:5d6e7f80:91a2b3c4:103".
std::string guid_text(const eprosima::fastrtps::rtps::InstanceHandle_t& handle);

// One-line messages on stderr, prefixed "fastdds_qos_peer: ".
void err(const std::string& message);

class Waker {
 public:
  void stop() {
    {
      std::lock_guard lk(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
  }
  void poke() {
    { std::lock_guard lk(mu_); }
    cv_.notify_all();
  }
  bool stopped() {
    std::lock_guard lk(mu_);
    return stopped_;
  }
  // Until `done()`, a stop or `until`; true when done() became true. done() runs under the lock:
  // it may only read atomics.
  template <class F>
  bool wait_until(Clock::time_point until, F&& done) {
    std::unique_lock lk(mu_);
    while (!done()) {
      if (stopped_ || cv_.wait_until(lk, until) == std::cv_status::timeout) return done();
    }
    return true;
  }
  // Sleeps until `until` or a stop; false when stopped.
  bool sleep_until(Clock::time_point until) {
    std::unique_lock lk(mu_);
    return !cv_.wait_until(lk, until, [&] { return stopped_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

}  // namespace qos_peer
