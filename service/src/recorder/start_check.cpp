// --check-config's trial of what Recorder::create does besides the configuration's syntax
// (service/recorder.hpp, check_start): the same calls, undone at once.
#include "control_auth.hpp"
#include "control_server.hpp"
#include "metrics_server.hpp"
#include "pubsub/network.hpp"
#include "service/recorder.hpp"

namespace service {

std::vector<std::string> check_start(const config::RecorderConfig& c) {
  std::vector<std::string> problems;
  if (auto itf = pubsub::find_network_interface(c.interface); !itf) {
    problems.push_back("/interface: " + itf.error().message);
  }
  if (!c.metrics.listen.empty()) {
    if (auto m = MetricsServer::start(c.metrics.listen, [] { return std::string(); }); !m) {
      problems.push_back("/metrics/listen: " + m.error().message);
    }
  }
  // A socket inside the recording directory is new with it (validate_storage_path checks that).
  const auto socket = control_socket_path(c);
  if (!socket.empty() && c.control.socket.is_absolute()) {
    if (auto s = ControlServer::start(
            socket,
            [](const nlohmann::json&) {
              return nlohmann::json{{"ok", false}, {"error", "pubsub-recorder --check-config"}};
            });
        !s) {
      problems.push_back("/control/socket: " + s.error().message);
    }
  }
  if (c.control.dds && !c.control.key_file.empty()) {
    if (auto k = load_control_key(c.control.key_file); !k)
      problems.push_back("/control/key_file: " + k.error().message);
  }
  return problems;
}

}  // namespace service
