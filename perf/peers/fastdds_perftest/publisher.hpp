// fastdds_perftest's publisher side (publisher.cpp): the data writer, and with -latencyTest the
// echo reader whose listener (LatencyPublisher) times the round trips.
//
// The main thread creates it and calls run(); main.cpp's run() destroys it after the
// participant, so that no echo listener runs any more by then. Fast DDS's reception thread calls
// the echo listener.
#pragma once

#include <memory>

#include "fastdds_perftest.hpp"

namespace fastdds_perftest {

class LatencyPublisher;  // publisher.cpp

class PublisherSide {
 public:
  explicit PublisherSide(const Options& o);
  ~PublisherSide();

  // The data writer, and with -latencyTest the echo reader; false with a message.
  bool create(Participant& p);

  // Waits for the subscribers, then the throughput or latency run and its report. Returns the
  // exit status.
  int run();

 private:
  const Options& o_;
  dds::DataWriter* writer_ = nullptr;
  dds::DataReader* echo_reader_ = nullptr;
  std::unique_ptr<LatencyPublisher> latency_;
};

}  // namespace fastdds_perftest
