// fastdds_perftest's subscriber side (subscriber.hpp): counting samples and loss per writer from
// the sequence number in the payload, echoing pings, and the throughput CSV row and -summaryJson
// at the end.
//
// Threads: Fast DDS's reception thread runs on_data_available (SubscriberState::on_sample, or
// the echo of a ping). The main thread waits in finish() for every publisher's end marker and
// prints; the IntervalPrinter's thread reads the counts once a second meanwhile.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "subscriber.hpp"

#include "body_hash.hpp"
#include "interval_printer.hpp"
#include "summary_json.hpp"

namespace fastdds_perftest {
namespace {

std::string handle_hex(const frtps::InstanceHandle_t& h) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < 16; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(h.value[i]));
    s += b;
  }
  return s;
}

}  // namespace

void SubscriberState::on_sample(const frtps::InstanceHandle_t& writer, const uint8_t* body,
                                Clock::time_point now) {
  std::lock_guard lk(mu_);
  WriterCount& w = writers_[writer];
  const uint32_t seq = get_u32(body);
  const uint32_t kind = get_u32(body + 4);
  if (kind == kKindEnd) {
    if (!w.ended) {
      w.ended = true;
      if (seq >= w.next_seq) w.lost += seq - w.next_seq + 1;  // the tail never arrived
      w.end_seq = seq;
      ended_writers_++;
      cv_.notify_all();
    }
    return;
  }
  if (kind != kKindData || w.ended) return;
  if (total_ == 0) first_ = now;
  last_ = now;
  total_++;
  w.samples++;
  w.bytes += o_.datalen;
  if (!o_.summary_json.empty()) w.checksum += perftest::body_hash(body, o_.datalen);
  if (seq < w.next_seq) {
    duplicates_++;
    return;
  }
  if (!w.first_seq) w.first_seq = seq;
  w.lost += seq - w.next_seq;
  w.next_seq = seq + 1;
}

bool SubscriberState::wait() {
  const auto deadline = Clock::now() + seconds_of(o_.exec_seconds);
  std::unique_lock lk(mu_);
  return cv_.wait_until(lk, deadline, [&] { return ended_writers_ >= o_.num_publishers; });
}

SubscriberState::Totals SubscriberState::totals() {
  std::lock_guard lk(mu_);
  Totals t{0, 0, 0, std::chrono::duration<double>(last_ - first_).count(), 0};
  for (auto& [g, w] : writers_) {
    t.samples += w.samples;
    t.bytes += w.bytes;
    t.lost += w.lost;
    t.first_seq = w.first_seq;
  }
  return t;
}

uint64_t SubscriberState::total_samples() {
  std::lock_guard lk(mu_);
  return total_;
}

bool SubscriberState::write_json(const std::string& path, bool completed) {
  std::lock_guard lk(mu_);
  std::vector<perftest::WriterSummary> ws;
  for (auto& [g, w] : writers_) {
    ws.push_back({handle_hex(g), w.samples, w.bytes, w.lost, w.checksum, w.first_seq,
                  w.next_seq - 1, w.end_seq});
  }
  return perftest::write_summary_json(
      path, {completed, duplicates_, std::chrono::duration<double>(last_ - first_).count()}, ws);
}

uint64_t SubscriberState::total_lost() {
  std::lock_guard lk(mu_);
  uint64_t l = 0;
  for (auto& [g, w] : writers_) l += w.lost;
  return l;
}

bool SubscriberSide::create(Participant& p) {
  if (o_.latency_test) {
    echo_ = p.create_writer(o_, p.echo_topic(), true);
    if (!echo_) {
      err("could not create the echo writer (%s%s)", transport_name(o_.transport),
          o_.data_sharing ? ", data sharing" : "");
      return false;
    }
  }
  reader_ = p.create_reader(o_, p.data_topic(), this);
  if (!reader_) {
    err("could not create the data reader (%s%s)", transport_name(o_.transport),
        o_.data_sharing ? ", data sharing" : "");
    return false;
  }
  return true;
}

void SubscriberSide::on_data_available(dds::DataReader* r) {
  take_all(r, o_.zero_copy, buf_.data(), [&](const uint8_t* body, const dds::SampleInfo& info) {
    const auto now = Clock::now();
    if (echo_ && get_u32(body + 4) == kKindPing) {
      echo_->write(const_cast<uint8_t*>(body), frtps::c_InstanceHandle_Unknown);
      return;
    }
    state_.on_sample(info.publication_handle, body, now);
  });
}

int SubscriberSide::finish() {
  bool completed;
  {
    perftest::IntervalPrinter printer(!o_.no_print && !o_.latency_test, [&] {
      return std::pair{state_.total_samples(), state_.total_lost()};
    });
    completed = state_.wait();
  }
  if (o_.latency_test) return completed ? 0 : 1;
  if (!o_.summary_json.empty() && !state_.write_json(o_.summary_json, completed)) {
    err("cannot write %s: %s", o_.summary_json.c_str(), std::strerror(errno));
    return 1;
  }
  const auto t = state_.totals();
  perftest::print_throughput_row(o_.datalen, t.samples, t.lost, t.seconds, o_.no_output_headers);
  if (const uint64_t n = overwritten_loans.load()) {
    err("%" PRIu64 " loaned samples were overwritten by the writer before they were read", n);
  }
  if (!completed) {
    err("run incomplete after %.1f s (%" PRIu64 " samples)", o_.exec_seconds, t.samples);
    return 1;
  }
  if (t.samples == 0) {
    err("no samples received");
    return 1;
  }
  if (!o_.best_effort && t.lost > 0) {
    err("%" PRIu64 " samples lost on a reliable topic (the first one received: %u)", t.lost,
        t.first_seq);
    return 1;
  }
  return 0;
}

}  // namespace fastdds_perftest
