// ROS 2 names, schemas and QoS text (ros2.hpp).
#include "ros2.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "types/idl_writer.hpp"

namespace service::replay::detail {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The parts of s between separators (one part when there is none).
std::vector<std::string_view> split(std::string_view s, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (size_t pos = 0;;) {
    const size_t sep = s.find(separator, pos);
    parts.push_back(s.substr(pos, sep == std::string_view::npos ? sep : sep - pos));
    if (sep == std::string_view::npos) return parts;
    pos = sep + separator.size();
  }
}

// A ROS name part: letters, digits, '_' (the design article's tokens), not empty.
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// "/ns/chatter" with every part a token (the leading '/' optional).
bool is_ros_path(std::string_view s) {
  if (!s.empty() && s.front() == '/') s.remove_prefix(1);
  const auto parts = split(s, "/");
  return std::all_of(parts.begin(), parts.end(), is_token);
}

const char* msg_primitive(types::Kind k) {
  switch (k) {
    case types::Kind::kBool:
      return "bool";
    case types::Kind::kChar8:
      return "char";
    case types::Kind::kOctet:
      return "byte";
    case types::Kind::kInt8:
      return "int8";
    case types::Kind::kUInt8:
      return "uint8";
    case types::Kind::kInt16:
      return "int16";
    case types::Kind::kUInt16:
      return "uint16";
    case types::Kind::kInt32:
      return "int32";
    case types::Kind::kUInt32:
      return "uint32";
    case types::Kind::kInt64:
      return "int64";
    case types::Kind::kUInt64:
      return "uint64";
    case types::Kind::kFloat32:
      return "float32";
    case types::Kind::kFloat64:
      return "float64";
    default:
      return nullptr;
  }
}

const std::string kSeparator(80, '=');

// A field's type as .msg files write it: "pkg/Name" for "pkg/msg/Name" (rosidl_adapter's form);
// other kinds keep their three parts.
std::string msg_field_type(const std::string& ros_type) {
  const size_t a = ros_type.find('/');
  if (ros_type.compare(a, 5, "/msg/") == 0) return ros_type.substr(0, a) + ros_type.substr(a + 4);
  return ros_type;
}

// Writes .msg texts: the field type of a member, the message types met on the way (in the order
// first used), and whether everything could be said in .msg at all.
struct MsgWriter {
  const types::TypeLibrary& lib;
  std::vector<types::TypeId> deps;  // structs used, first use first
  bool ros = true;                  // every struct met has a ROS 2 name
  bool expressible = true;          // and .msg can state every member

  // "float64", "string<=10", "geometry_msgs/Point", with "[]", "[<=N]" or "[N]" for sequences
  // and arrays of one dimension; "" when .msg has no form for it.
  std::string field_type(types::TypeId id, bool element = false) {
    const types::Type& t = lib.at(lib.resolve(id));
    if (const char* p = msg_primitive(t.kind)) return p;
    switch (t.kind) {
      case types::Kind::kString:
        return t.bound ? "string<=" + std::to_string(t.bound) : "string";
      case types::Kind::kSequence:
      case types::Kind::kArray: {
        if (element || (t.kind == types::Kind::kArray && t.dims.size() != 1)) break;
        std::string e = field_type(t.element, true);
        if (e.empty()) return e;
        if (t.kind == types::Kind::kArray) return e + "[" + std::to_string(t.dims[0]) + "]";
        return e + (t.bound ? "[<=" + std::to_string(t.bound) + "]" : "[]");
      }
      case types::Kind::kStruct: {
        auto name = ros_type_from_dds(t.name);
        if (!name) {
          ros = false;
          return "";
        }
        const types::TypeId sid = lib.resolve(id);
        if (std::find(deps.begin(), deps.end(), sid) == deps.end()) deps.push_back(sid);
        return msg_field_type(*name);
      }
      default:
        break;
    }
    expressible = false;
    return "";
  }

  // The .msg text of a struct ("TYPE NAME" lines); "" and expressible = false when it has a base,
  // optional members or is mutable.
  std::string fields(types::TypeId id) {
    const types::Type& t = lib.at(id);
    if (t.base != types::kNoType || t.extensibility == types::Extensibility::kMutable) {
      expressible = false;
      return "";
    }
    std::string out;
    for (const types::Member& m : t.members) {
      if (m.optional) expressible = false;
      const std::string ft = field_type(m.type);
      if (ft.empty()) return "";
      out += ft + " " + m.name + "\n";
    }
    return out;
  }
};

// Depth-first: every struct `top` reaches, in first-use order, `top` first.
std::vector<types::TypeId> structs_used(const types::TypeLibrary& lib, types::TypeId top) {
  std::vector<types::TypeId> order{top};
  std::set<types::TypeId> seen{top};
  for (size_t i = 0; i < order.size(); ++i) {
    const types::Type& t = lib.at(order[i]);
    std::vector<types::TypeId> refs;
    if (t.base != types::kNoType) refs.push_back(t.base);
    for (const auto& m : t.members) refs.push_back(m.type);
    for (const auto& c : t.cases) refs.push_back(c.member.type);
    for (size_t r = 0; r < refs.size(); ++r) {
      const types::TypeId id = lib.resolve(refs[r]);
      const types::Type& u = lib.at(id);
      if (u.element != types::kNoType) refs.push_back(u.element);
      if ((u.kind == types::Kind::kStruct || u.kind == types::Kind::kUnion) &&
          seen.insert(id).second)
        order.push_back(id);
    }
  }
  return order;
}

}  // namespace

std::optional<std::string> ros_topic_from_dds(std::string_view dds_topic) {
  if (dds_topic.size() < 4 || dds_topic[2] != '/') return std::nullopt;
  const std::string_view prefix = dds_topic.substr(0, 2);
  std::string_view rest = dds_topic.substr(3);
  if (prefix == "rq" || prefix == "rr") {
    const std::string_view suffix = prefix == "rq" ? "Request" : "Reply";
    if (!ends_with(rest, suffix)) return std::nullopt;
    rest.remove_suffix(suffix.size());
  } else if (prefix != "rt") {
    return std::nullopt;
  }
  if (!is_ros_path(rest) || rest.front() == '/') return std::nullopt;
  return "/" + std::string(rest);
}

std::optional<std::string> ros_type_from_dds(std::string_view dds_type) {
  if (dds_type.substr(0, 2) == "::") dds_type.remove_prefix(2);
  const auto parts = split(dds_type, "::");
  if (parts.size() != 4 || parts[2] != "dds_" || !ends_with(parts[3], "_")) return std::nullopt;
  std::string_view name = parts[3].substr(0, parts[3].size() - 1);
  if (!is_token(parts[0]) || !is_token(parts[1]) || !is_token(name)) return std::nullopt;
  return std::string(parts[0]) + "/" + std::string(parts[1]) + "/" + std::string(name);
}

std::optional<std::string> dds_topic_from_ros(std::string_view ros_topic,
                                              std::string_view ros_type) {
  if (!ros_topic.empty() && ros_topic.front() == '/') ros_topic.remove_prefix(1);
  if (!is_ros_path(ros_topic)) return std::nullopt;
  if (ends_with(ros_type, "_Request")) return "rq/" + std::string(ros_topic) + "Request";
  if (ends_with(ros_type, "_Response")) return "rr/" + std::string(ros_topic) + "Reply";
  return "rt/" + std::string(ros_topic);
}

std::optional<std::string> dds_type_from_ros(std::string_view ros_type) {
  auto parts = split(ros_type, "/");
  if (parts.size() == 2) parts.insert(parts.begin() + 1, "msg");
  if (parts.size() != 3) return std::nullopt;
  for (auto p : parts)
    if (!is_token(p)) return std::nullopt;
  return std::string(parts[0]) + "::" + std::string(parts[1]) + "::dds_::" + std::string(parts[2]) +
         "_";
}

std::optional<Ros2Schema> ros2_schema(const types::TypeLibrary& lib, types::TypeId top) {
  top = lib.resolve(top);
  const types::Type& t = lib.at(top);
  auto name = ros_type_from_dds(t.name);
  if (!name || t.kind != types::Kind::kStruct) return std::nullopt;
  MsgWriter w{lib, {top}};
  std::string text = w.fields(top);
  for (size_t i = 1; i < w.deps.size() && w.ros && w.expressible; ++i) {
    const std::string body = w.fields(w.deps[i]);
    const std::string dep = msg_field_type(*ros_type_from_dds(lib.at(w.deps[i]).name));
    text += "\n" + kSeparator + "\nMSG: " + dep + "\n" + body;
  }
  if (!w.ros) return std::nullopt;
  if (w.expressible) return Ros2Schema{*name, "ros2msg", text};
  // ros2idl: the names of everything it uses must still be ROS 2 names.
  for (types::TypeId id : structs_used(lib, top))
    if (!ros_type_from_dds(lib.at(id).name)) return std::nullopt;
  return Ros2Schema{*name, "ros2idl",
                    "IDL: " + *name + "\n" + types::to_idl(lib, top, types::IdlDialect::kStandard)};
}

namespace {

// One QoS profile as a YAML map, each line prefixed with `indent` (the first line with `first`,
// "- " for a list entry); enum values as rmw's integers or names.
void put_qos(std::string& out, const RecordedQos& q, bool names, const std::string& first,
             const std::string& indent) {
  using pubsub::DurabilityKind, pubsub::LivelinessKind;
  const bool keep_last = q.history.kind == pubsub::HistoryKind::kKeepLast;
  const bool reliable = q.reliability == pubsub::ReliabilityKind::kReliable;
  const bool durable = q.durability != DurabilityKind::kVolatile;
  const LivelinessKind lk = q.policies.liveliness.kind;
  auto e = [&](int number, const char* name) {
    return names ? std::string(name) : std::to_string(number);
  };
  auto line = [&](const std::string& key, const std::string& value) {
    out += (out.empty() || out.back() == '\n' ? "" : "\n");
    out += (key == "history" ? first : indent) + key + ":" + (value.empty() ? "" : " " + value);
  };
  auto duration = [&](const char* key, pubsub::Duration d) {
    const bool inf = d == pubsub::kInfinite;
    line(key, "");
    line("  sec", std::to_string(inf ? 9223372036LL : d.count() / 1000000000));
    line("  nsec", std::to_string(inf ? 854775807LL : d.count() % 1000000000));
  };
  line("history", keep_last ? e(1, "keep_last") : e(2, "keep_all"));
  line("depth", std::to_string(keep_last ? q.history.depth : 0));
  line("reliability", reliable ? e(1, "reliable") : e(2, "best_effort"));
  line("durability", durable ? e(1, "transient_local") : e(2, "volatile"));
  duration("deadline", q.policies.deadline);
  duration("lifespan", q.policies.lifespan);
  line("liveliness", lk == LivelinessKind::kAutomatic       ? e(1, "automatic")
                     : lk == LivelinessKind::kManualByTopic ? e(3, "manual_by_topic")
                                                            : e(2, "manual_by_node"));
  duration("liveliness_lease_duration", q.policies.liveliness.lease_duration);
  line("avoid_ros_namespace_conventions", "false");
}

}  // namespace

std::string offered_qos_profiles(const std::vector<RecordedQos>& writers) {
  std::string out;
  for (const RecordedQos& q : writers) put_qos(out, q, false, "- ", "  ");
  return out;
}

std::string rosbag2_metadata(const std::vector<Ros2BagTopic>& topics, uint64_t start_ns,
                             uint64_t end_ns, uint64_t messages, const std::string& file_name) {
  const std::string duration = std::to_string(end_ns - start_ns);
  const std::string start = std::to_string(start_ns);
  const std::string count = std::to_string(messages);
  std::string y = "version: 9\nstorage_identifier: mcap\nduration:\n  nanoseconds: " + duration +
                  "\nstarting_time:\n  nanoseconds_since_epoch: " + start +
                  "\nmessage_count: " + count + "\ntopics_with_message_count:";
  if (topics.empty()) y += "\n  []";
  for (const Ros2BagTopic& t : topics) {
    y += "\n  - topic_metadata:\n      name: " + t.name + "\n      type: " + t.type +
         "\n      serialization_format: cdr\n      offered_qos_profiles:";
    if (t.qos.empty()) y += "\n        []";
    std::string profiles;
    for (const RecordedQos& q : t.qos) put_qos(profiles, q, true, "        - ", "          ");
    if (!profiles.empty()) y += "\n" + profiles;
    y += "\n      type_description_hash: \"\"\n    message_count: " + std::to_string(t.messages);
  }
  y += "\ncompression_format: \"\"\ncompression_mode: \"\"\nrelative_file_paths:\n  - " +
       file_name + "\nfiles:\n  - path: " + file_name +
       "\n    starting_time:\n      nanoseconds_since_epoch: " + start +
       "\n    duration:\n      nanoseconds: " + duration + "\n    message_count: " + count +
       "\ncustom_data: ~\nros_distro: \"\"";
  return y;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "pkg/msg/Name" and "pkg/Name" -> "pkg/Name"; `package` for a bare "Name".
std::string msg_key(std::string_view type, std::string_view package) {
  auto parts = split(type, "/");
  if (parts.size() == 3 && parts[1] == "msg")
    return std::string(parts[0]) + "/" + std::string(parts[2]);
  if (parts.size() == 1) return std::string(package) + "/" + std::string(type);
  return std::string(type);
}

std::optional<types::Kind> msg_kind(std::string_view t) {
  static const std::map<std::string_view, types::Kind> kinds = {
      {"bool", types::Kind::kBool},       {"byte", types::Kind::kOctet},
      {"char", types::Kind::kUInt8},      {"int8", types::Kind::kInt8},
      {"uint8", types::Kind::kUInt8},     {"int16", types::Kind::kInt16},
      {"uint16", types::Kind::kUInt16},   {"int32", types::Kind::kInt32},
      {"uint32", types::Kind::kUInt32},   {"int64", types::Kind::kInt64},
      {"uint64", types::Kind::kUInt64},   {"float32", types::Kind::kFloat32},
      {"float64", types::Kind::kFloat64}, {"string", types::Kind::kString}};
  auto it = kinds.find(t);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> to_u32(std::string_view s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return static_cast<uint32_t>(std::stoul(std::string(s)));
}

// Builds the struct types of a ros2msg schema's sections, each once, dependencies on demand.
class MsgParser {
 public:
  MsgParser(std::string_view name, std::string_view text) : top_(msg_key(name, "")) {
    std::string key = top_;
    bool expect_name = false;
    for (std::string_view line : split(text, "\n")) {
      if (is_schema_separator(line)) {
        expect_name = true;
      } else if (expect_name && trim(line).starts_with("MSG:")) {
        key = msg_key(trim(trim(line).substr(4)), "");
        expect_name = false;
      } else {
        sections_[key].push_back(line);
      }
    }
    sections_.try_emplace(top_);
  }

  Result<types::TypeLibrary> run() {
    auto top = build(top_, 0);
    if (!top) return top.error();
    return std::move(lib_);
  }

 private:
  Result<types::TypeId> build(const std::string& key, int depth) {
    if (auto it = built_.find(key); it != built_.end()) return it->second;
    auto sec = sections_.find(key);
    if (sec == sections_.end() &&
        (key == "builtin_interfaces/Time" || key == "builtin_interfaces/Duration"))
      sec = sections_.emplace(key, std::vector<std::string_view>{"int32 sec", "uint32 nanosec"})
                .first;
    if (sec == sections_.end())
      return Error{Errc::kInvalidArgument, "type " + key + " is not in the schema"};
    if (depth > 32) return Error{Errc::kInvalidArgument, "types nested too deep at " + key};
    const std::string package = key.substr(0, key.find('/'));
    types::Type t;
    t.kind = types::Kind::kStruct;
    t.name = *dds_type_from_ros(key);
    std::vector<types::Member> members;
    for (std::string_view line : sec->second) {
      auto m = member(line, package, depth);
      if (!m) return m.error().with_context(key);
      if (!m->name.empty()) members.push_back(std::move(*m));
    }
    if (members.empty())
      members.push_back(
          {"structure_needs_at_least_one_member", lib_.primitive(types::Kind::kUInt8)});
    t.members = std::move(members);
    for (uint32_t i = 0; i < t.members.size(); ++i) t.members[i].id = i;
    const types::TypeId id = lib_.add(std::move(t));
    built_[key] = id;
    return id;
  }

  // A field line's member; one with no name for a blank line, a comment or a constant.
  Result<types::Member> member(std::string_view line, const std::string& package, int depth) {
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) return types::Member{};
    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos)
      return Error{Errc::kInvalidArgument, "line '" + std::string(line) + "' is not TYPE NAME"};
    const std::string_view type = line.substr(0, sp);
    std::string_view rest = trim(line.substr(sp));
    const size_t end = rest.find_first_of(" \t=");
    const std::string_view name = rest.substr(0, end);
    if (end != std::string_view::npos && trim(rest.substr(end)).starts_with("="))
      return types::Member{};  // a constant: not on the wire
    if (!is_token(name))
      return Error{Errc::kInvalidArgument, "line '" + std::string(line) + "': bad field name"};
    auto id = field_type(type, package, depth);
    if (!id) return id.error().with_context("line '" + std::string(line) + "'");
    types::Member m;
    m.name = std::string(name);
    m.type = *id;
    return m;
  }

  // "float64", "string<=5", "pkg/Name", "Name", each with "[]", "[<=N]" or "[N]".
  Result<types::TypeId> field_type(std::string_view type, const std::string& package, int depth) {
    std::string_view base = type, suffix;
    if (auto b = type.find('['); b != std::string_view::npos) {
      base = type.substr(0, b);
      suffix = type.substr(b);
      if (suffix.back() != ']') return Error{Errc::kInvalidArgument, "bad array suffix"};
      suffix = suffix.substr(1, suffix.size() - 2);
    }
    auto element = base_type(base, package, depth);
    if (!element || type.find('[') == std::string_view::npos) return element;
    types::Type c;
    c.element = *element;
    if (suffix.empty() || suffix.starts_with("<=")) {
      c.kind = types::Kind::kSequence;
      auto bound = suffix.empty() ? std::optional<uint32_t>(0) : to_u32(suffix.substr(2));
      if (!bound) return Error{Errc::kInvalidArgument, "bad sequence bound"};
      c.bound = *bound;
    } else {
      c.kind = types::Kind::kArray;
      auto n = to_u32(suffix);
      if (!n || *n == 0) return Error{Errc::kInvalidArgument, "bad array length"};
      c.dims = {*n};
    }
    return lib_.add(std::move(c));
  }

  Result<types::TypeId> base_type(std::string_view base, const std::string& package, int depth) {
    if (base.starts_with("string<=")) {
      auto bound = to_u32(base.substr(8));
      if (!bound) return Error{Errc::kInvalidArgument, "bad string bound"};
      types::Type s;
      s.kind = types::Kind::kString;
      s.bound = *bound;
      return lib_.add(std::move(s));
    }
    if (auto k = msg_kind(base)) return lib_.primitive(*k);
    if (base == "wstring" || base.starts_with("wstring<="))
      return Error{Errc::kInvalidArgument, "wstring is not supported"};
    std::string key;
    if (base == "time" || base == "duration")
      key = base == "time" ? "builtin_interfaces/Time" : "builtin_interfaces/Duration";
    else
      key = msg_key(base, package);
    if (base == "Header" && !sections_.count(key)) key = "std_msgs/Header";  // ROS 1's bare Header
    if (!dds_type_from_ros(key)) return Error{Errc::kInvalidArgument, "bad type name"};
    return build(key, depth + 1);
  }

  std::string top_;
  std::map<std::string, std::vector<std::string_view>> sections_;
  std::map<std::string, types::TypeId> built_;
  types::TypeLibrary lib_;
};

}  // namespace

bool is_schema_separator(std::string_view line) {
  line = trim(line);
  return line.size() >= 3 && line.find_first_not_of('=') == std::string_view::npos;
}

std::string ros2idl_text(std::string_view text) {
  std::string idl;
  for (std::string_view line : split(text, "\n"))
    if (!is_schema_separator(line) && !trim(line).starts_with("IDL:"))
      idl.append(line).append("\n");
  return idl;
}

std::optional<std::string> dds_type_from_ros_idl(std::string_view idl_name) {
  const auto parts = split(idl_name, "::");
  if (parts.size() != 3 || !(parts[1] == "msg" || parts[1] == "srv" || parts[1] == "action"))
    return std::nullopt;
  return std::string(parts[0]) + "::" + std::string(parts[1]) + "::dds_::" + std::string(parts[2]) +
         "_";
}

Result<types::TypeLibrary> parse_ros2msg(std::string_view name, std::string_view text) {
  if (!dds_type_from_ros(name))
    return Error{Errc::kInvalidArgument,
                 "schema name '" + std::string(name) + "' is not pkg/msg/Name"};
  auto lib = MsgParser(name, text).run();
  if (!lib) return lib.error().with_context("ros2msg schema " + std::string(name));
  return lib;
}

std::optional<RecordedQos> parse_offered_qos(std::string_view yaml) {
  // The first entry's "key: value" lines; a nested duration's sec/nsec under its key.
  std::map<std::string, std::string> v;
  std::string parent;
  bool started = false;
  for (std::string_view line : split(yaml, "\n")) {
    if (line.starts_with("- ")) {
      if (started) break;
      started = true;
      line.remove_prefix(2);
    } else if (!started || !line.starts_with("  ")) {
      if (trim(line).empty()) continue;
      return std::nullopt;
    }
    const bool nested = line.starts_with("    ");
    line = trim(line);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string key(trim(line.substr(0, colon)));
    const std::string value(trim(line.substr(colon + 1)));
    if (value.empty())
      parent = key;
    else
      v[nested ? parent + "." + key : key] = value;
  }
  if (!started || !v.count("reliability") || !v.count("durability")) return std::nullopt;
  auto is = [&](const char* key, const char* number, const char* name) {
    return v[key] == number || v[key] == name;
  };
  auto duration = [&](const std::string& key, pubsub::Duration& out) {
    const auto sec = v.find(key + ".sec"), nsec = v.find(key + ".nsec");
    if (sec == v.end() || nsec == v.end()) return;
    const long long s = std::atoll(sec->second.c_str()), n = std::atoll(nsec->second.c_str());
    if (s >= 9223372036LL || (s == 0 && n == 0))
      out = pubsub::kInfinite;  // infinite; unspecified
    else
      out = std::chrono::seconds(s) + std::chrono::nanoseconds(n);
  };
  RecordedQos q;
  q.reliability = is("reliability", "2", "best_effort") ? pubsub::ReliabilityKind::kBestEffort
                                                        : pubsub::ReliabilityKind::kReliable;
  q.durability = is("durability", "1", "transient_local") ? pubsub::DurabilityKind::kTransientLocal
                                                          : pubsub::DurabilityKind::kVolatile;
  const int depth = std::atoi(v["depth"].c_str());
  if (is("history", "1", "keep_last") && depth > 0)
    q.history = {pubsub::HistoryKind::kKeepLast, depth};
  duration("deadline", q.policies.deadline);
  duration("lifespan", q.policies.lifespan);
  duration("liveliness_lease_duration", q.policies.liveliness.lease_duration);
  if (is("liveliness", "3", "manual_by_topic"))
    q.policies.liveliness.kind = pubsub::LivelinessKind::kManualByTopic;
  else if (is("liveliness", "2", "manual_by_node"))
    q.policies.liveliness.kind = pubsub::LivelinessKind::kManualByParticipant;
  return q;
}

}  // namespace service::replay::detail
