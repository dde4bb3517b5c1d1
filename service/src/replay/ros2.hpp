// ROS 2 on DDS: the names, schemas and QoS text of the MCAP ros2 profile (export --profile ros2,
// and MCAP in). Pure functions, no state; private to service/src/replay.
//
// Names, per the ROS 2 design article "Topic and Service name mapping to DDS" and the rmw
// implementations (rmw_cyclonedds, rmw_fastrtps): a ROS topic "/ns/chatter" is the DDS topic
// "rt/ns/chatter"; a service "/add" is two DDS topics, "rq/addRequest" (requests, type
// pkg/srv/Add_Request) and "rr/addReply" (replies, type pkg/srv/Add_Response). A ROS type
// "pkg/msg/Name" is the DDS type "pkg::msg::dds_::Name_" (the same for srv and action types).
//
// Schemas: a ros2msg schema is the .msg text of the type (one "TYPE NAME" line per field), then
// for every message type it uses, a separator line of 80 '=', a line "MSG: pkg/msg/Name" and that
// type's .msg text - the form rosbag2 writes and @foxglove/rosmsg reads. Types .msg cannot state
// (unions, enums, inheritance, optional members, arrays of several dimensions, mutable types)
// get a ros2idl schema instead: "IDL: pkg/msg/Name" then IDL text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/recording_schema.hpp"
#include "service/result.hpp"
#include "types/type_model.hpp"

namespace service::replay::detail {

// "rt/ns/chatter" -> "/ns/chatter"; "rq/addRequest" and "rr/addReply" -> "/add"; nullopt for a
// DDS topic that is not a ROS 2 one.
std::optional<std::string> ros_topic_from_dds(std::string_view dds_topic);
// "pkg::msg::dds_::Name_" -> "pkg/msg/Name" (any interface kind: msg, srv, action); nullopt for
// a DDS type that is not a ROS 2 one.
std::optional<std::string> ros_type_from_dds(std::string_view dds_type);
// Back: "/ns/chatter" of "pkg/msg/T" -> "rt/ns/chatter"; "/add" of a type ending "_Request" ->
// "rq/addRequest", of one ending "_Response" -> "rr/addReply". A name without its leading '/' is
// taken as absolute. nullopt for an empty name or one ending in '/'.
std::optional<std::string> dds_topic_from_ros(std::string_view ros_topic,
                                              std::string_view ros_type);
// "pkg/msg/Name" (or "pkg/Name", ROS 1's form: msg) -> "pkg::msg::dds_::Name_"; nullopt for a
// name of another shape.
std::optional<std::string> dds_type_from_ros(std::string_view ros_type);

struct Ros2Schema {
  std::string name;      // "pkg/msg/Name"
  std::string encoding;  // "ros2msg" or "ros2idl"
  std::string text;
};
// The schema of `top` (a struct whose name is a ROS 2 DDS type name). nullopt when `top` or a
// type it uses is not a ROS 2 type (then no schema can name it).
std::optional<Ros2Schema> ros2_schema(const types::TypeLibrary& lib, types::TypeId top);

// A line between a schema's sections: '=' only (rosbag2 writes 80).
bool is_schema_separator(std::string_view line);
// A ros2idl schema's IDL: its text without the separator and "IDL: pkg/msg/Name" lines.
std::string ros2idl_text(std::string_view text);
// ROS 2's IDL name of a type ("pkg::msg::Name", rosidl's .idl files) -> the DDS one
// ("pkg::msg::dds_::Name_"); nullopt for another shape.
std::optional<std::string> dds_type_from_ros_idl(std::string_view idl_name);

// Back from schemas (MCAP in): the types of a ros2msg schema named `name` ("pkg/msg/Name"; text
// as ros2_schema or rosbag2 writes it: comments, constants and default values allowed, nested
// types as "pkg/Name", "pkg/msg/Name" or a bare "Name" of the same package), each under its DDS
// name ("pkg::msg::dds_::Name_"); .msg's char is uint8, byte octet, time and duration are
// builtin_interfaces', a message without fields gets rosidl's structure_needs_at_least_one_member.
// kInvalidArgument naming the line for what is not .msg (wstring included: not in our model).
Result<types::TypeLibrary> parse_ros2msg(std::string_view name, std::string_view text);
// A ros2idl schema: its IDL sections parsed as one document; types under ROS 2's IDL names
// ("pkg::msg::Name") renamed to the DDS ones when the DDS name of `name` is not there.
// In ros2_idl.cpp (it needs libcycloneddsidl's parser).
Result<types::TypeLibrary> parse_ros2idl(std::string_view name, std::string_view text);
// offered_qos_profiles back to QoS: its first entry (history, depth, reliability, durability,
// deadline, lifespan, liveliness and its lease), enums as integers or names; nullopt for text
// that is not such a list.
std::optional<RecordedQos> parse_offered_qos(std::string_view yaml);

// The offered_qos_profiles text of an MCAP channel: a YAML list, one entry per writer, enums as
// integers (rmw's values: what Humble's `ros2 bag play` parses, and Jazzy's too), durations as
// sec/nsec (infinite: 9223372036 s 854775807 ns, rmw's RMW_DURATION_INFINITE), no final newline.
// DDS durabilities ROS 2 lacks (TRANSIENT, PERSISTENT) are written as transient_local.
std::string offered_qos_profiles(const std::vector<RecordedQos>& writers);

// The rosbag2 metadata record's "serialized_metadata" (BagMetadata version 9, what Jazzy's
// rosbag2 writes into its MCAP files): every key that version needs, QoS profiles nested with
// enums as names.
struct Ros2BagTopic {
  std::string name;  // ROS name
  std::string type;  // ROS type name
  std::vector<RecordedQos> qos;
  uint64_t messages = 0;
};
std::string rosbag2_metadata(const std::vector<Ros2BagTopic>& topics, uint64_t start_ns,
                             uint64_t end_ns, uint64_t messages, const std::string& file_name);

}  // namespace service::replay::detail
