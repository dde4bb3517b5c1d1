// pubsub_qos_peer: JSON lines, stderr and the main thread's waits (output.hpp). Any thread.
#include "output.hpp"

#include <cstdio>

namespace pubsub_peer {
namespace {

std::mutex out_mu;
bool out_ready = false;
bool out_closed = false;
std::string out_held;  // lines before "ready"

void write_locked(FILE* f, const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), f);
  std::fflush(f);
}

}  // namespace

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

Line::Line(const char* event) : text_(std::string("{\"event\":\"") + event + "\"") {}

Line& Line::num(const char* key, int64_t v) {
  text_ += std::string(",\"") + key + "\":" + std::to_string(v);
  return *this;
}

Line& Line::flag(const char* key, bool v) {
  text_ += std::string(",\"") + key + "\":" + (v ? "true" : "false");
  return *this;
}

Line& Line::text(const char* key, const std::string& v) {
  text_ += std::string(",\"") + key + "\":\"" + v + "\"";
  return *this;
}

void emit(const Line& line) {
  const std::string s = line.str() + "}\n";
  std::lock_guard lk(out_mu);
  if (out_closed) return;
  if (out_ready) {
    write_locked(stdout, s);
  } else {
    out_held += s;
  }
}

void emit_ready() {
  std::lock_guard lk(out_mu);
  if (out_ready || out_closed) return;
  out_ready = true;
  write_locked(stdout, "{\"event\":\"ready\"}\n" + out_held);
  out_held.clear();
}

void emit_last(const Line& line) {
  const std::string s = line.str() + "}\n";
  std::lock_guard lk(out_mu);
  if (!out_closed) write_locked(stdout, s);
  out_closed = true;
}

void err(const std::string& message) {
  const std::string s = "pubsub_qos_peer: " + message + "\n";
  std::lock_guard lk(out_mu);
  write_locked(stderr, s);
}

void Waker::stop() {
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void Waker::poke() {
  { std::lock_guard lk(mu_); }  // a waiter between its check and its wait sees the change
  cv_.notify_all();
}

bool Waker::stopped() {
  std::lock_guard lk(mu_);
  return stopped_;
}

bool Waker::sleep_until(Clock::time_point until) {
  std::unique_lock lk(mu_);
  return !cv_.wait_until(lk, until, [&] { return stopped_; });
}

}  // namespace pubsub_peer
