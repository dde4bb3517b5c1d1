// ControlServer: the recorder's control socket (a Unix domain stream socket, mode 0600).
//
// OVERVIEW
// - Protocol: one JSON object per line in each direction. Every request line gets exactly one
//   reply line, in order. A line that is not a JSON object, or longer than kMaxLineBytes, is
//   answered {"ok":false,"error":...}; a too-long line also ends the connection.
// - One thread (started by start(), joined by the destructor) runs a Boost.Asio io_context:
//   accepts clients and reads, answers and writes for all of them. The handler runs on that
//   thread, one request at a time.
// - The destructor stops accepting, lets replies being written finish (at most ~1 s), closes
//   every connection and removes the socket file.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "pubsub/basics.hpp"
#include "service/result.hpp"

namespace service {

class ControlServer {
 public:
  static constexpr size_t kMaxLineBytes = 64 * 1024;
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  // Listens on `path`. A socket file nobody accepts on (a crashed recorder's) is replaced; one
  // another process listens on is refused (kAlreadyExists), as is a path that exists and is not
  // a socket (kAlreadyExists) or cannot be bound (kIo).
  static Result<std::unique_ptr<ControlServer>> start(const std::filesystem::path& path,
                                                      Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  const std::filesystem::path& path() const;

  struct Impl;

 private:
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Client side: sends one request and waits up to `timeout` for its reply. Errors: kNotFound /
// kNetwork (cannot connect: no socket, nobody listening), kTimeout, kCorrupt (a reply that is
// not one JSON object).
Result<nlohmann::json> control_request(const std::filesystem::path& path,
                                       const nlohmann::json& request,
                                       std::chrono::milliseconds timeout);

}  // namespace service
