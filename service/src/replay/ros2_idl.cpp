// parse_ros2idl (ros2.hpp): apart from ros2.cpp because it needs the IDL parser
// (libcycloneddsidl), which the fuzz build of pubsub_mcap_lib leaves out.
#include "ros2.hpp"
#include "types/idl.hpp"

namespace service::replay::detail {

Result<types::TypeLibrary> parse_ros2idl(std::string_view name, std::string_view text) {
  auto dds = dds_type_from_ros(name);
  if (!dds)
    return Error{Errc::kInvalidArgument,
                 "schema name '" + std::string(name) + "' is not pkg/msg/Name"};
  const std::string idl = ros2idl_text(text);
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
