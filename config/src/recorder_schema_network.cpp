// RecorderSchema: where the recorder joins and who may drive it: interface, peers, transports,
// discovery limits, metrics, control and control.allow (recorder_schema.hpp has the overview).
#include <arpa/inet.h>

#include "recorder_schema.hpp"

namespace config::detail {

namespace {

bool is_ipv4(const std::string& s) {
  if (s.find('\0') != std::string::npos) return false;  // inet_pton would stop at it
  in_addr addr{};
  return inet_pton(AF_INET, s.c_str(), &addr) == 1;
}

// "", an interface name as the kernel accepts it (dev_valid_name, except that ':' is allowed for
// address labels such as "eth0:1"), or an IPv4 address.
bool is_interface(const std::string& s) {
  if (s.empty()) return true;  // automatic
  if (s.find_first_not_of("0123456789.") == std::string::npos) return is_ipv4(s);
  if (s.size() > kMaxInterfaceName || s == "." || s == "..") return false;
  for (const char c : s) {
    if (c == '/' || c == ' ' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

const std::string kNotNetwork =
    "expected an IPv4 network such as \"198.18.0.0/15\" or an IPv4 address, got ";

// "A.B.C.D/N" (N in 0..32) or "A.B.C.D" (a /32). kInvalidArgument when it is not, with the
// start of the schema's message ("expected ..., got ").
common::Expected<Ipv4Network> parse_network(const std::string& s) {
  const common::Error not_network{common::Errc::kInvalidArgument, kNotNetwork};
  const auto slash = s.find('/');
  const std::string address = s.substr(0, slash);
  in_addr addr{};
  if (address.find('\0') != std::string::npos || inet_pton(AF_INET, address.c_str(), &addr) != 1) {
    return not_network;
  }
  uint64_t prefix = 32;
  if (slash != std::string::npos) {
    const std::string digits = s.substr(slash + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return not_network;
    }
    prefix = digits.size() > 9 ? 33 : std::stoul(digits);  // no overflow
    if (prefix > 32) {
      return common::Error{common::Errc::kInvalidArgument,
                           "expected a prefix length in 0..32, got "};
    }
  }
  return Ipv4Network{ntohl(addr.s_addr), static_cast<uint8_t>(prefix)};
}

}  // namespace

void RecorderSchema::interface(const Json& v, const std::string& p) {
  if (v.is_string() && is_interface(v.get<std::string>())) {
    c_.interface = v.get<std::string>();
    return;
  }
  r_.fail(p,
          "expected an interface name (at most 15 characters, no '/' or spaces), an IPv4 "
          "address or \"\", got " +
              describe(v));
}

void RecorderSchema::peers(const Json& v, const std::string& p) {
  std::vector<std::string> out;
  const size_t errors = r_.error_count();
  r_.array(v, p, "IPv4 address strings", [&](const Json& e, const std::string& ep) {
    if (e.is_string() && is_ipv4(e.get<std::string>())) {
      out.push_back(e.get<std::string>());
    } else {
      r_.fail(ep, "expected an IPv4 address string, got " + describe(e));
    }
  });
  if (r_.error_count() == errors) c_.peers = std::move(out);
}

void RecorderSchema::transports(const Json& v, const std::string& p) {
  bool shm = false, udp = false;
  const size_t errors = r_.error_count();
  r_.array(v, p, "\"shm\" and/or \"udp\"", [&](const Json& e, const std::string& ep) {
    const std::string name = e.is_string() ? e.get<std::string>() : "";
    bool& seen = name == "shm" ? shm : udp;
    if (name != "shm" && name != "udp") {
      r_.fail(ep, "expected \"shm\" or \"udp\", got " + describe(e));
    } else if (seen) {
      r_.fail(ep, "\"" + name + "\" is listed twice");
    } else {
      seen = true;
    }
  });
  if (r_.error_count() != errors) return;
  if (!shm && !udp) {
    r_.fail(p, "expected at least one of \"shm\" and \"udp\", got []");
    return;
  }
  c_.transport_shm = shm;
  c_.transport_udp = udp;
}

void RecorderSchema::discovery(const Json& v, const std::string& p) {
  auto& d = c_.discovery;
  const auto limit = [&](uint64_t& out, uint64_t max) {
    return [&, max](const Json& e, const std::string& ep) { r_.integer(e, ep, out, 1, max); };
  };
  r_.object(v, p,
            {
                {"max_participants", limit(d.max_participants, 1000000)},
                {"max_participants_per_address", limit(d.max_participants_per_address, 1000000)},
                {"max_endpoints_per_participant", limit(d.max_endpoints_per_participant, 10000000)},
                {"max_endpoints", limit(d.max_endpoints, 10000000)},
            });
}

void RecorderSchema::metrics(const Json& v, const std::string& p) {
  r_.object(v, p,
            {
                {"listen",
                 [&](const Json& e, const std::string& ep) {
                   if (e.is_string() && is_listen_address(e.get<std::string>())) {
                     c_.metrics.listen = e.get<std::string>();
                   } else {
                     r_.fail(ep, "expected \"IPV4:PORT\" (e.g. \"127.0.0.1:9464\") or \"\", got " +
                                     describe(e));
                   }
                 }},
            });
}

bool RecorderSchema::is_listen_address(const std::string& s) {
  if (s.empty()) return true;
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size() || s.size() - colon > 6) return false;
  for (size_t i = colon + 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return std::stoul(s.substr(colon + 1)) <= 65535 && is_ipv4(s.substr(0, colon));
}

void RecorderSchema::control(const Json& v, const std::string& p) {
  r_.object(
      v, p,
      {
          {"socket",
           [&](const Json& e, const std::string& ep) {
             // sockaddr_un's sun_path holds 108 bytes with the terminating NUL.
             if (e.is_string() && e.get<std::string>().size() <= 107 &&
                 e.get<std::string>().find('\0') == std::string::npos) {
               c_.control.socket = e.get<std::string>();
             } else {
               r_.fail(ep,
                       "expected a socket path of at most 107 bytes without NUL "
                       "characters, or \"\" for none, got " +
                           describe(e));
             }
           }},
          {"dds", [&](const Json& e, const std::string& ep) { dds(e, ep); }},
          {"allow", [&](const Json& e, const std::string& ep) { allow(e, ep); }},
          {"key_file",
           [&](const Json& e, const std::string& ep) {
             if (e.is_string() && e.get<std::string>().find('\0') == std::string::npos) {
               c_.control.key_file = e.get<std::string>();
             } else {
               r_.fail(ep, "expected the path of a key file, or \"\" for none, got " + describe(e));
             }
           }},
          {"set",
           [&](const Json& e, const std::string& ep) {
             std::string name;
             if (!r_.string(e, ep, name)) return;
             const bool ok =
                 name.size() <= 64 && name.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                          "qrstuvwxyz0123456789._-") == std::string::npos;
             if (!ok) {
               r_.fail(ep,
                       "expected a set name of at most 64 characters of A-Z a-z 0-9 . _ -, got " +
                           describe(e));
               return;
             }
             c_.control.set = std::move(name);
           }},
          {"armed",
           [&](const Json& e, const std::string& ep) {
             if (e.is_boolean()) {
               c_.control.armed = e.get<bool>();
             } else {
               r_.fail(ep, "expected true or false, got " + describe(e));
             }
           }},
          {"max_clock_skew_s",
           [&](const Json& e, const std::string& ep) {
             if (e.is_number() && e.get<double>() >= 1 && e.get<double>() <= 3600) {
               c_.control.max_clock_skew_s = e.get<double>();
             } else {
               r_.fail(ep, "expected seconds from 1 to 3600, got " + describe(e));
             }
           }},
      });
  if (v.is_object()) dds_needs_allow(v, p);
  if (!c_.control.set.empty() && !c_.control.dds)
    r_.fail(p + "/set",
            "names a recording set reached by DDS control: set /control/dds to true, "
            "or leave set out");
  if (!c_.control.key_file.empty() && !c_.control.dds)
    r_.fail(p + "/key_file",
            "signs DDS control requests: set /control/dds to true, or leave key_file out");
}

void RecorderSchema::dds(const Json& v, const std::string& p) {
  if (v.is_boolean()) {
    c_.control.dds = v.get<bool>();
  } else {
    r_.fail(p, "expected true or false, got " + describe(v));
  }
}

void RecorderSchema::dds_needs_allow(const Json& v, const std::string& p) {
  if (!allow_ok_ || !c_.control.dds || !c_.control.allow.empty()) return;
  r_.fail(p + "/allow",
          "required when /control/dds is true (expected a non-empty array of the IPv4 "
          "networks whose participants may send commands, e.g. [\"127.0.0.1/32\"])" +
              std::string(v.contains("allow") ? ", got []" : ""));
}

void RecorderSchema::allow(const Json& v, const std::string& p) {
  std::vector<Ipv4Network> out;
  const size_t errors = r_.error_count();
  const bool is_array =
      r_.array(v, p, "IPv4 network strings", [&](const Json& e, const std::string& ep) {
        if (!e.is_string()) return r_.fail(ep, kNotNetwork + describe(e));
        auto net = parse_network(e.get<std::string>());
        if (!net) return r_.fail(ep, net.error().message + describe(e));
        out.push_back(*net);
      });
  allow_ok_ = is_array && r_.error_count() == errors;
  if (allow_ok_) c_.control.allow = std::move(out);
}

}  // namespace config::detail
