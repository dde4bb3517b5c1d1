#include "metrics_server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <cstdio>
#include <map>
#include <thread>

#include "common/thread_name.hpp"

namespace service {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Tcp = asio::ip::tcp;

// A Prometheus label value: backslash, double quote and line feed escaped.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Series {
  const char* name;
  const char* type;
  const char* help;
};

void header(std::string& out, const Series& s) {
  out +=
      std::string("# HELP ") + s.name + ' ' + s.help + "\n# TYPE " + s.name + ' ' + s.type + '\n';
}

void value(std::string& out, const char* name, const std::string& labels, double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  out += std::string(name) + labels + ' ' + b + '\n';
}

}  // namespace

std::string prometheus_text(const RecorderStatus& s) {
  std::string out;
  const auto total = [&](const Series& se, double v) {
    header(out, se);
    value(out, se.name, "", v);
  };
  total({"pubsub_recorder_samples_total", "counter", "Samples recorded."},
        static_cast<double>(s.samples));
  total({"pubsub_recorder_bytes_total", "counter", "Payload bytes recorded."},
        static_cast<double>(s.bytes));
  total({"pubsub_recorder_lost_total", "counter",
         "Samples best-effort writers sent that never arrived."},
        static_cast<double>(s.lost));
  total({"pubsub_recorder_held_back_total", "counter",
         "Deliveries refused while storage was full (back-pressure, not loss)."},
        static_cast<double>(s.held_back));
  total({"pubsub_recorder_skipped_total", "counter", "Samples not recorded: topic paused."},
        static_cast<double>(s.skipped));
  total({"pubsub_recorder_queue_fill_ratio", "gauge",
         "Closed chunks waiting for the disk, fraction of queue_max_bytes."},
        s.queue_fill);
  total({"pubsub_recorder_paused", "gauge", "1 while every topic is paused."}, s.paused ? 1 : 0);
  total({"pubsub_recorder_writers", "gauge", "Writers matched."}, static_cast<double>(s.writers));
  total({"pubsub_recorder_writers_elsewhere", "gauge",
         "Writers on other hosts matched so far, not recorded (topics.writers local)."},
        static_cast<double>(s.writers_elsewhere));
  total({"pubsub_recorder_uptime_seconds", "gauge", "Seconds since recording started."}, s.seconds);
  total({"pubsub_recorder_clock_steps_total", "counter",
         "Steps of the wall clock seen (reception times follow the monotonic clock)."},
        static_cast<double>(s.clock_steps));
  total({"pubsub_recorder_wall_clock_offset_seconds", "gauge",
         "The wall clock minus reception times: the sum of its steps since the start."},
        s.wall_clock_offset_s);
  if (s.hooks) {
    total({"pubsub_recorder_hooks_failed_total", "counter",
           "storage.on_segment_closed commands that failed (exit status not 0, or a signal)."},
          static_cast<double>(s.hooks->failed));
    total({"pubsub_recorder_hooks_pending", "gauge",
           "storage.on_segment_closed commands queued or running."},
          static_cast<double>(s.hooks->pending));
  }
  if (s.snapshot) {
    const SnapshotStatus& n = *s.snapshot;
    total({"pubsub_recorder_snapshot_buffered_bytes", "gauge",
           "Snapshot mode: memory holding the buffered seconds."},
          static_cast<double>(n.buffered_bytes));
    total(
        {"pubsub_recorder_snapshot_buffered_samples", "gauge", "Snapshot mode: samples in memory."},
        static_cast<double>(n.buffered_samples));
    total({"pubsub_recorder_snapshot_dropped_samples_total", "counter",
           "Snapshot mode: samples that left memory early (snapshot.max_bytes)."},
          static_cast<double>(n.dropped_samples));
    total({"pubsub_recorder_snapshots_total", "counter", "Snapshot mode: snapshots written."},
          static_cast<double>(n.snapshots));
  }
  // A counter per key of `counts`, labelled `label` (the header even when there is none).
  const auto labelled = [&](const Series& se, const char* label,
                            const std::map<std::string, uint64_t>& counts) {
    header(out, se);
    for (const auto& [key, n] : counts) {
      value(out, se.name, std::string("{") + label + "=\"" + key + "\"}", static_cast<double>(n));
    }
  };
  labelled({"pubsub_recorder_incompatible_qos_total", "counter",
            "Endpoint pairs not matched: a requested/offered QoS rule fails."},
           "policy", s.incompatible_qos);
  if (!s.discovery_refused.empty()) {
    labelled({"pubsub_recorder_discovery_refused_total", "counter",
              "Discovery announcements refused by the discovery limits, by kind."},
             "kind", s.discovery_refused);
  }
  if (!s.control_refused.empty()) {
    labelled({"pubsub_recorder_control_refused_total", "counter",
              "DDS control requests refused, by reason."},
             "reason", s.control_refused);
  }
  const Series per_topic[] = {
      {"pubsub_recorder_topic_samples_total", "counter", "Samples recorded, per topic."},
      {"pubsub_recorder_topic_bytes_total", "counter", "Payload bytes recorded, per topic."},
      {"pubsub_recorder_topic_lost_total", "counter", "Samples lost, per topic."},
      {"pubsub_recorder_topic_paused", "gauge", "1 while the topic is paused."},
  };
  for (size_t i = 0; i < std::size(per_topic); ++i) {
    header(out, per_topic[i]);
    for (const auto& t : s.topics) {
      const double v = i == 0   ? static_cast<double>(t.samples)
                       : i == 1 ? static_cast<double>(t.bytes)
                       : i == 2 ? static_cast<double>(t.lost)
                                : (t.paused ? 1 : 0);
      value(out, per_topic[i].name, "{topic=\"" + label(t.name) + "\"}", v);
    }
  }
  return out;
}

struct MetricsServer::Impl {
  std::function<std::string()> render;
  asio::io_context io;
  Tcp::acceptor acceptor{io};
  std::thread thread;

  struct Conn : std::enable_shared_from_this<Conn> {
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
    explicit Conn(Tcp::socket s) : stream(std::move(s)) {}
  };

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, Tcp::socket s) {
      if (ec) return;
      auto c = std::make_shared<Conn>(std::move(s));
      c->stream.expires_after(std::chrono::seconds(10));
      http::async_read(c->stream, c->buffer, c->req,
                       [this, c](boost::system::error_code e, size_t) {
                         if (!e) respond(c);
                       });
      accept();
    });
  }

  void respond(const std::shared_ptr<Conn>& c) {
    auto& res = c->res;
    res.version(c->req.version());
    res.keep_alive(false);
    res.set(http::field::server, "pubsub-recorder");
    if (c->req.method() != http::verb::get && c->req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::allow, "GET, HEAD");
      res.body() = "only GET /metrics\n";
    } else if (c->req.target() != "/metrics") {
      res.result(http::status::not_found);
      res.body() = "not found: the metrics are at /metrics\n";
    } else {
      res.result(http::status::ok);
      res.body() = render();
    }
    res.set(http::field::content_type, res.result() == http::status::ok
                                           ? "text/plain; version=0.0.4; charset=utf-8"
                                           : "text/plain; charset=utf-8");
    res.prepare_payload();
    if (c->req.method() == http::verb::head) res.body().clear();
    http::async_write(c->stream, res, [c](boost::system::error_code, size_t) {
      boost::system::error_code ignored;
      c->stream.socket().shutdown(Tcp::socket::shutdown_both, ignored);
    });
  }
};

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen,
                                                            std::function<std::string()> render) {
  const auto colon = listen.rfind(':');
  boost::system::error_code ec;
  const auto addr = colon == std::string::npos
                        ? asio::ip::address_v4()
                        : asio::ip::make_address_v4(listen.substr(0, colon), ec);
  unsigned port = 0;
  const char* pb = listen.data() + (colon == std::string::npos ? 0 : colon + 1);
  const auto [end, perr] = std::from_chars(pb, listen.data() + listen.size(), port);
  if (colon == std::string::npos || ec || perr != std::errc() ||
      end != listen.data() + listen.size() || port > 65535)
    return Error{Errc::kInvalidArgument,
                 "metrics.listen: expected IPV4:PORT, got \"" + listen + "\""};
  auto impl = std::make_unique<Impl>();
  impl->render = std::move(render);
  const Tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error{Errc::kNetwork, "metrics endpoint " + listen + ": " + ec.message()};
  Impl* m = impl.get();
  m->accept();
  m->thread = std::thread([m] { m->io.run(); });
  common::name_thread(m->thread, "rec-metrics");
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  impl_->io.stop();
  impl_->thread.join();
}

uint16_t MetricsServer::port() const {
  return impl_->acceptor.local_endpoint().port();
}

}  // namespace service
