// parse_ros2idl (ros2.hpp): apart from ros2.cpp because it needs the IDL parser
// (libcycloneddsidl), which the fuzz build of pubsub_mcap_lib leaves out.
#include <cctype>

#include "ros2.hpp"
#include "types/idl.hpp"

namespace service::replay::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<types::TypeLibrary> parse_ros2idl(std::string_view name, std::string_view text) {
  auto dds = dds_type_from_ros(name);
  if (!dds)
    return Error{Errc::kInvalidArgument,
                 "schema name '" + std::string(name) + "' is not pkg/msg/Name"};
  std::string idl;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!is_schema_separator(line) && !trim(line).starts_with("IDL:"))
      idl.append(line).append("\n");
  }
  auto lib = types::parse_idl(idl, name);
  if (!lib)
    return Error{Errc::kInvalidArgument,
                 "ros2idl schema " + std::string(name) + ": " + lib.error().message};
  if (lib->find(*dds)) return std::move(*lib);
  for (types::TypeId id = 0; id < lib->size(); ++id) {  // ROS 2's IDL names -> DDS names
    types::Type& t = lib->at(id);
    if (auto dds_name = dds_type_from_ros_idl(t.name)) t.name = *dds_name;
  }
  if (!lib->find(*dds))
    return Error{Errc::kInvalidArgument,
                 "ros2idl schema " + std::string(name) + " does not define it"};
  return std::move(*lib);
}

}  // namespace service::replay::detail
