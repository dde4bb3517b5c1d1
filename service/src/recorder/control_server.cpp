#include "control_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cerrno>
#include <cstring>
#include <future>
#include <set>
#include <thread>

#include "common/thread_name.hpp"
#include "common/unix_socket.hpp"
#include "control_commands.hpp"

namespace service {
namespace {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;

Error io_error(Errc code, const std::string& what, int err) {
  return Error{code, what + ": " + std::strerror(err)};
}

// A connected stream socket to `path`, or the connect error.
Result<int> connect_to(const std::filesystem::path& path) {
  const std::string p = path.string();
  auto name = common::UnixSocketPath::of(p);  // a long path through its directory
  if (!name) return name.error();
  const sockaddr_un addr = name->address();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_error(Errc::kIo, "socket", errno);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error(err == ENOENT ? Errc::kNotFound : Errc::kNetwork, "cannot connect to " + p,
                    err);
  }
  return fd;
}

}  // namespace

struct ControlServer::Impl {
  std::filesystem::path path;
  Handler handler;
  asio::io_context io;
  Local::acceptor acceptor{io};
  std::thread thread;
  std::future<void> finished;  // ready when the io thread's run() returned
  bool stopping = false;       // io thread only

  struct Conn : std::enable_shared_from_this<Conn> {
    Impl& owner;
    Local::socket socket;
    asio::streambuf in{kMaxLineBytes};
    std::string out;
    bool writing = false;
    Conn(Impl& o, Local::socket s) : owner(o), socket(std::move(s)) {}
  };
  std::set<std::shared_ptr<Conn>> conns;  // io thread only

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, Local::socket s) {
      if (ec || stopping) return;
      auto c = std::make_shared<Conn>(*this, std::move(s));
      conns.insert(c);
      read(c);
      accept();
    });
  }

  void drop(const std::shared_ptr<Conn>& c) {
    boost::system::error_code ignored;
    c->socket.close(ignored);
    conns.erase(c);
  }

  void read(const std::shared_ptr<Conn>& c) {
    asio::async_read_until(
        c->socket, c->in, '\n', [this, c](boost::system::error_code ec, size_t n) {
          if (stopping) return drop(c);
          if (ec == asio::error::not_found) {  // the line does not fit in the buffer
            return answer(
                c, refusal("request longer than " + std::to_string(kMaxLineBytes) + " bytes"),
                false);
          }
          if (ec) return drop(c);
          std::string line(asio::buffers_begin(c->in.data()),
                           asio::buffers_begin(c->in.data()) + static_cast<std::ptrdiff_t>(n));
          c->in.consume(n);
          answer(c, handle_line(line), true);
        });
  }

  nlohmann::json handle_line(const std::string& line) {
    auto request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.is_object())
      return refusal("a request is one JSON object per line, e.g. {\"cmd\":\"status\"}");
    try {
      return handler(request);
    } catch (const std::exception& e) {  // a handler bug must not end the recorder
      return refusal(std::string("internal error: ") + e.what());
    }
  }

  void answer(const std::shared_ptr<Conn>& c, const nlohmann::json& reply, bool more) {
    c->out = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    c->writing = true;
    asio::async_write(c->socket, asio::buffer(c->out),
                      [this, c, more](boost::system::error_code ec, size_t) {
                        c->writing = false;
                        if (ec || !more || stopping) return drop(c);
                        read(c);
                      });
  }

  // Io thread: no new clients or requests; replies being written finish, then run() returns.
  void shut_down() {
    stopping = true;
    boost::system::error_code ignored;
    acceptor.close(ignored);
    for (auto it = conns.begin(); it != conns.end();) {
      auto c = *it++;
      if (!c->writing) drop(c);
    }
  }
};

Result<std::unique_ptr<ControlServer>> ControlServer::start(const std::filesystem::path& path,
                                                            Handler handler) {
  const std::string p = path.string();
  // sun_path holds 107 bytes: a longer path is bound through its directory.
  auto name = common::UnixSocketPath::of(p);
  if (!name) return name.error().with_context("control socket");
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Error{Errc::kAlreadyExists, "control socket " + p + " exists and is not a socket"};
    if (auto fd = connect_to(path); fd) {
      ::close(*fd);
      return Error{Errc::kAlreadyExists, "another recorder listens on control socket " + p};
    }
    if (::unlink(p.c_str()) != 0 && errno != ENOENT)
      return io_error(Errc::kIo, "remove stale control socket " + p, errno);
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->handler = std::move(handler);
  boost::system::error_code ec;
  impl->acceptor.open(Local(), ec);
  if (!ec) impl->acceptor.bind(Local::endpoint(name->name()), ec);
  if (ec) return Error{Errc::kIo, "bind control socket " + p + ": " + ec.message()};
  // Owner only, before anyone can connect (listen comes after).
  if (::chmod(p.c_str(), 0600) != 0) {
    const int err = errno;
    ::unlink(p.c_str());
    return io_error(Errc::kIo, "chmod control socket " + p, err);
  }
  impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    ::unlink(p.c_str());
    return Error{Errc::kIo, "listen on control socket " + p + ": " + ec.message()};
  }
  Impl* m = impl.get();
  m->accept();
  std::promise<void> done;
  m->finished = done.get_future();
  m->thread = std::thread([m, done = std::move(done)]() mutable {
    m->io.run();
    done.set_value();
  });
  common::name_thread(m->thread, "rec-control");
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlServer::~ControlServer() {
  Impl& m = *impl_;
  asio::post(m.io, [&m] { m.shut_down(); });
  // A client that does not read its reply must not hold the recorder's exit up.
  if (m.finished.wait_for(std::chrono::seconds(1)) != std::future_status::ready) m.io.stop();
  m.thread.join();
  m.conns.clear();
  ::unlink(m.path.c_str());
}

const std::filesystem::path& ControlServer::path() const {
  return impl_->path;
}

Result<nlohmann::json> control_request(const std::filesystem::path& path,
                                       const nlohmann::json& request,
                                       std::chrono::milliseconds timeout) {
  auto fd = connect_to(path);
  if (!fd) return fd.error();
  const int s = *fd;
  const std::string line = request.dump() + "\n";
  for (size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::send(s, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      const int err = errno;
      ::close(s);
      return io_error(Errc::kNetwork, "send to " + path.string(), err);
    }
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (reply.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{s, POLLIN, 0};
    const int r = left.count() > 0 ? ::poll(&pfd, 1, static_cast<int>(left.count())) : 0;
    if (r == 0) {
      ::close(s);
      return Error{Errc::kTimeout, "no reply from " + path.string() + " within " +
                                       std::to_string(timeout.count()) + " ms"};
    }
    const ssize_t n = r < 0 ? -1 : ::recv(s, buf, sizeof buf, 0);
    if (n <= 0) {
      const int err = n < 0 ? errno : ECONNRESET;
      ::close(s);
      return io_error(Errc::kNetwork, "read reply from " + path.string(), err);
    }
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(s);
  auto j = nlohmann::json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error{Errc::kCorrupt, "reply is not a JSON object: " + reply};
  return j;
}

}  // namespace service
