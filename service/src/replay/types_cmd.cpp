// `pubsub-replay types DIR [--topic NAME]`: the IDL of the recorded topic types (see replay.hpp).
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"

namespace service::replay {
namespace {

using detail::report;

// The topics of each type name, in topic order.
std::map<std::string, std::vector<std::string>> topics_by_type(
    const std::vector<storage::TopicInfo>& topics) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& t : topics) out[t.def.type_name].push_back(t.def.name);
  return out;
}

void print_type(std::ostream& out, const storage::TypeDef& def,
                const std::vector<storage::TypeDef>& all, const std::vector<std::string>& topics) {
  out << "// type " << def.type_name << ", from " << detail::type_source_name(&def);
  for (const auto& t : all) {
    if (t.type_name == def.type_name && &t != &def)
      out << " (also " << detail::type_source_name(&t) << ", not used)";
  }
  out << "; topics:";
  for (const auto& n : topics) out << ' ' << n;
  if (topics.empty()) out << " none";
  out << '\n' << def.idl;
  if (!def.idl.empty() && def.idl.back() != '\n') out << '\n';
}

}  // namespace

int types(const TypesOptions& o, std::ostream& out, std::ostream& err) {
  auto rec = detail::open_recording(o.dir);
  if (!rec) return report(err, kExitUsage, rec.error());
  auto topics = (*rec)->topics();
  auto types = (*rec)->types();
  if (!topics || !types) {
    const Status& s = !topics ? topics.error() : types.error();
    return report(err, kExitUsage, o.dir + ": cannot read the index: " + s.error().message);
  }
  const auto by_type = topics_by_type(*topics);
  if (!o.topic.empty()) {
    for (const auto& t : *topics) {
      if (t.def.name != o.topic) continue;
      const storage::TypeDef* def = detail::recorded_type(*types, t.def.type_name);
      if (!def) {
        return report(err, kExitProblems,
                      "topic " + o.topic + " (type " + t.def.type_name + "): no type recorded");
      }
      print_type(out, *def, *types, by_type.at(t.def.type_name));
      return kExitOk;
    }
    return report(err, kExitUsage, "no topic " + o.topic + " in " + o.dir);
  }
  std::set<std::string> printed;
  for (const auto& t : *types) {
    if (!printed.insert(t.type_name).second) continue;
    auto it = by_type.find(t.type_name);
    print_type(out, *detail::recorded_type(*types, t.type_name), *types,
               it == by_type.end() ? std::vector<std::string>{} : it->second);
  }
  std::vector<std::string> untyped;
  for (const auto& [name, names] : by_type)
    if (!detail::recorded_type(*types, name)) untyped.push_back(name);
  if (printed.empty()) return report(err, kExitProblems, o.dir + ": no type definitions recorded");
  if (!untyped.empty()) {
    std::string line = "no type recorded for";
    for (const auto& n : untyped) line += " " + n;
    detail::warn(err, line);
  }
  out.flush();
  return out ? kExitOk : kExitProblems;
}

}  // namespace service::replay
