// fastdds_perftest's subscriber side (subscriber.cpp): the data reader, with -latencyTest the
// echo writer, and the per-writer counts from which it prints the throughput CSV row.
//
// The main thread creates it and calls finish(); main.cpp's run() destroys it after the
// participant, so that no reader calls its listener any more by then. Fast DDS's reception thread
// calls on_data_available, which counts into SubscriberState (under its mutex) or, for a ping,
// writes the echo from that same thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fastdds_perftest.hpp"

namespace fastdds_perftest {

struct WriterCount {
  uint64_t samples = 0;
  uint64_t bytes = 0;
  uint64_t lost = 0;
  uint32_t next_seq = 1;
  uint32_t first_seq = 0;
  uint32_t end_seq = 0;   // the end-of-run marker's: the last sequence number written
  uint64_t checksum = 0;  // sum of body_hash() over the samples (-summaryJson)
  bool ended = false;
};

// Counts per writer. on_sample: reception thread; the rest: the main thread and the interval
// printer's thread. Everything under mu_.
class SubscriberState {
 public:
  SubscriberState(const Options& o) : o_(o) {}

  void on_sample(const frtps::InstanceHandle_t& writer, const uint8_t* body, Clock::time_point now);

  // Waits for every publisher's end of run, up to -exec seconds.
  bool wait();

  struct Totals {
    uint64_t samples, bytes, lost;
    double seconds;
    uint32_t first_seq;  // the first sequence number received (of the last writer)
  };
  Totals totals();
  uint64_t total_samples();

  // pubsub-perftest's -summaryJson (tests/integration/lib/check_json.py reads both).
  bool write_json(const std::string& path, bool completed);
  uint64_t total_lost();

 private:
  const Options& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<frtps::InstanceHandle_t, WriterCount> writers_;
  uint64_t total_ = 0;
  uint64_t duplicates_ = 0;
  uint32_t ended_writers_ = 0;
  Clock::time_point first_{}, last_{};
};

// The subscriber side: the data reader, and with -latencyTest the echo writer.
class SubscriberSide : public dds::DataReaderListener {
 public:
  SubscriberSide(const Options& o) : o_(o), state_(o), buf_(o.datalen + 4, 0) {}

  // The echo writer (-latencyTest) and the data reader; false with a message.
  bool create(Participant& p);

  // Reception thread (Fast DDS's: transport, data-sharing listener, or the writer's own thread
  // with intra-process delivery).
  void on_data_available(dds::DataReader* r) override;

  // Waits for the end of run and prints the CSV row (throughput). Returns the exit status.
  int finish();

 private:
  const Options& o_;
  SubscriberState state_;
  std::vector<uint8_t> buf_;
  dds::DataWriter* echo_ = nullptr;
  dds::DataReader* reader_ = nullptr;
};

}  // namespace fastdds_perftest
