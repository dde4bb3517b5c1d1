// MetricsServer: the recorder's Prometheus endpoint (metrics.listen), HTTP/1.1 over Boost.Beast.
//
// OVERVIEW
// - GET /metrics answers the text exposition format (version 0.0.4) of what `render` returns;
//   any other path is 404, any other method 405. One request per connection (Connection: close).
// - One thread (started by start(), joined by the destructor) runs a Boost.Asio io_context with
//   every connection on it; `render` runs on that thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pubsub/basics.hpp"
#include "service/recorder.hpp"
#include "service/result.hpp"

namespace service {

class MetricsServer {
 public:
  // Listens on "IPV4:PORT" (port 0: any free port; port() says which). Errors: kInvalidArgument
  // (not IPV4:PORT), kNetwork (cannot bind).
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& listen,
                                                      std::function<std::string()> render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  uint16_t port() const;

  struct Impl;

 private:
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The recorder's status in the Prometheus text format: pubsub_recorder_* totals and gauges, and
// per-topic series labelled topic="NAME".
std::string prometheus_text(const RecorderStatus& status);

}  // namespace service
