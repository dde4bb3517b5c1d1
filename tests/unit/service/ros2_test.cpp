// ROS 2 names and schemas (service/src/replay/ros2.hpp): DDS <-> ROS names both ways, exact
// ros2msg texts of ROS 2's own message types written in IDL as rmw puts them on the wire, the
// ros2idl fallback and the types that get no schema.
#include <catch2/catch.hpp>
#include <fstream>

#include "ros2.hpp"
#include "ros2_msgs.hpp"
#include "types/idl.hpp"

using namespace service::replay::detail;
using replay_test::ros2_msgs_idl;
using service::RecordedQos;

TEST_CASE("ros2: DDS topic names to ROS names and back", "[ros2]") {
  CHECK(ros_topic_from_dds("rt/chatter") == "/chatter");
  CHECK(ros_topic_from_dds("rt/robot1/camera/image_raw") == "/robot1/camera/image_raw");
  CHECK(ros_topic_from_dds("rq/add_two_intsRequest") == "/add_two_ints");
  CHECK(ros_topic_from_dds("rr/ns/add_two_intsReply") == "/ns/add_two_ints");
  CHECK_FALSE(ros_topic_from_dds("rq/add_two_ints"));  // no Request suffix
  CHECK_FALSE(ros_topic_from_dds("rr/add_two_intsRequest"));
  CHECK_FALSE(ros_topic_from_dds("Square"));
  CHECK_FALSE(ros_topic_from_dds("rt/"));
  CHECK_FALSE(ros_topic_from_dds("rt//x"));
  CHECK_FALSE(ros_topic_from_dds("rt/a b"));
  CHECK_FALSE(ros_topic_from_dds("rs/x"));  // in the design article, used by no rmw

  CHECK(dds_topic_from_ros("/chatter", "std_msgs/msg/String") == "rt/chatter");
  CHECK(dds_topic_from_ros("chatter", "std_msgs/msg/String") == "rt/chatter");
  CHECK(dds_topic_from_ros("/ns/add", "example_interfaces/srv/AddTwoInts_Request") ==
        "rq/ns/addRequest");
  CHECK(dds_topic_from_ros("/add", "example_interfaces/srv/AddTwoInts_Response") == "rr/addReply");
  CHECK_FALSE(dds_topic_from_ros("/", "std_msgs/msg/String"));
  CHECK_FALSE(dds_topic_from_ros("/a/", "std_msgs/msg/String"));
  for (const char* t : {"rt/chatter", "rt/a/b_c", "rq/addRequest", "rr/addReply"}) {
    const char* type = t[1] == 'q'   ? "p/srv/A_Request"
                       : t[1] == 'r' ? "p/srv/A_Response"
                                     : "p/msg/M";
    CHECK(dds_topic_from_ros(*ros_topic_from_dds(t), type) == t);
  }
}

TEST_CASE("ros2: DDS type names to ROS names and back", "[ros2]") {
  CHECK(ros_type_from_dds("std_msgs::msg::dds_::String_") == "std_msgs/msg/String");
  CHECK(ros_type_from_dds("::std_msgs::msg::dds_::String_") == "std_msgs/msg/String");
  CHECK(ros_type_from_dds("example_interfaces::srv::dds_::AddTwoInts_Request_") ==
        "example_interfaces/srv/AddTwoInts_Request");
  CHECK(ros_type_from_dds("a::action::dds_::Fib_SendGoal_Request_") ==
        "a/action/Fib_SendGoal_Request");
  CHECK_FALSE(ros_type_from_dds("std_msgs::msg::String"));
  CHECK_FALSE(ros_type_from_dds("std_msgs::msg::dds_::String"));
  CHECK_FALSE(ros_type_from_dds("ShapeType"));
  CHECK_FALSE(ros_type_from_dds("a::b::c::dds_::T_"));

  CHECK(dds_type_from_ros("std_msgs/msg/String") == "std_msgs::msg::dds_::String_");
  CHECK(dds_type_from_ros("std_msgs/String") == "std_msgs::msg::dds_::String_");
  CHECK(dds_type_from_ros("p/srv/A_Response") == "p::srv::dds_::A_Response_");
  CHECK_FALSE(dds_type_from_ros("String"));
  CHECK_FALSE(dds_type_from_ros("a/b/c/d"));
  CHECK_FALSE(dds_type_from_ros("a//c"));
}

namespace {

Ros2Schema schema_of(const types::TypeLibrary& lib, const char* dds_name) {
  auto id = lib.find(dds_name);
  REQUIRE(id);
  auto s = ros2_schema(lib, *id);
  REQUIRE(s);
  return *s;
}

const std::string kSep = "\n" + std::string(80, '=');  // after a blank line, as rosbag2

}  // namespace

TEST_CASE("ros2: ros2msg schemas of ROS 2's message types", "[ros2]") {
  const auto lib = ros2_msgs_idl();
  auto s = schema_of(lib, "std_msgs::msg::dds_::String_");
  CHECK(s.name == "std_msgs/msg/String");
  CHECK(s.encoding == "ros2msg");
  CHECK(s.text == "string data\n");

  s = schema_of(lib, "geometry_msgs::msg::dds_::PoseStamped_");
  CHECK(s.name == "geometry_msgs/msg/PoseStamped");
  CHECK(s.encoding == "ros2msg");
  CHECK(s.text == "std_msgs/Header header\ngeometry_msgs/Pose pose\n" + kSep +
                      "\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n" +
                      kSep + "\nMSG: geometry_msgs/Pose\ngeometry_msgs/Point position\n" +
                      "geometry_msgs/Quaternion orientation\n" + kSep +
                      "\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n" + kSep +
                      "\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n" + kSep +
                      "\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\n"
                      "float64 w\n");

  s = schema_of(lib, "sensor_msgs::msg::dds_::Imu_");
  CHECK(s.text.substr(0, s.text.find(kSep)) ==
        "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n"
        "float64[9] orientation_covariance\ngeometry_msgs/Vector3 angular_velocity\n"
        "float64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\n"
        "float64[9] linear_acceleration_covariance\n");
}

TEST_CASE("ros2: every .msg field form, ros2idl and no schema for the rest", "[ros2]") {
  auto lib = types::parse_idl(R"(
struct ShapeType { long x; };
module p { module msg { module dds_ {
  struct Inner_ { octet b; };
  struct All_ {
    boolean a; char c; octet o; int8 i8; uint8 u8; short i16; unsigned short u16; long i32;
    unsigned long u32; long long i64; unsigned long long u64; float f; double d;
    string s; string<12> bs; sequence<long> sq; sequence<double, 4> bsq; long arr[3];
    sequence<p::msg::dds_::Inner_> inners; sequence<string<5>, 2> names;
  };
  union U_ switch (long) { case 0: long x; case 1: double y; };
  struct WithUnion_ { p::msg::dds_::U_ u; };
  struct Grid_ { long cells[2][3]; };
  struct Plain_ { ShapeType s; };
}; }; };
)",
                              "t.idl");
  REQUIRE(lib);
  auto s = schema_of(*lib, "p::msg::dds_::All_");
  CHECK(s.encoding == "ros2msg");
  CHECK(s.text ==
        "bool a\nchar c\nbyte o\nint8 i8\nuint8 u8\nint16 i16\nuint16 u16\nint32 i32\n"
        "uint32 u32\nint64 i64\nuint64 u64\nfloat32 f\nfloat64 d\nstring s\nstring<=12 bs\n"
        "int32[] sq\nfloat64[<=4] bsq\nint32[3] arr\np/Inner[] inners\nstring<=5[<=2] names\n" +
            kSep + "\nMSG: p/Inner\nbyte b\n");
  // A union and an array of two dimensions: no .msg form, IDL instead.
  for (const char* t : {"p::msg::dds_::WithUnion_", "p::msg::dds_::Grid_"}) {
    s = schema_of(*lib, t);
    CHECK(s.encoding == "ros2idl");
    CHECK(s.text.rfind("IDL: " + *ros_type_from_dds(t) + "\nmodule p {", 0) == 0);
  }
  // Not ROS 2 types: no schema.
  CHECK_FALSE(ros2_schema(*lib, *lib->find("ShapeType")));
  CHECK_FALSE(ros2_schema(*lib, *lib->find("p::msg::dds_::Plain_")));
}

TEST_CASE("ros2: offered_qos_profiles and rosbag2's serialized_metadata", "[ros2]") {
  RecordedQos a;  // reliable, volatile, keep-all, every duration infinite
  RecordedQos b;
  b.reliability = pubsub::ReliabilityKind::kBestEffort;
  b.durability = pubsub::DurabilityKind::kTransientLocal;
  b.history = {pubsub::HistoryKind::kKeepLast, 10};
  b.policies.deadline = std::chrono::milliseconds(1500);
  b.policies.liveliness = {pubsub::LivelinessKind::kManualByTopic, std::chrono::seconds(2)};
  const std::string inf = "    sec: 9223372036\n    nsec: 854775807\n";
  CHECK(offered_qos_profiles({a, b}) ==
        "- history: 2\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n" + inf +
            "  lifespan:\n" + inf + "  liveliness: 1\n  liveliness_lease_duration:\n" + inf +
            "  avoid_ros_namespace_conventions: false\n"
            "- history: 1\n  depth: 10\n  reliability: 2\n  durability: 1\n  deadline:\n"
            "    sec: 1\n    nsec: 500000000\n  lifespan:\n" +
            inf +
            "  liveliness: 3\n  liveliness_lease_duration:\n    sec: 2\n    nsec: 0\n"
            "  avoid_ros_namespace_conventions: false");
  CHECK(offered_qos_profiles({}) == "");

  const std::string y =
      rosbag2_metadata({{"/chatter", "std_msgs/msg/String", {b}, 3}}, 1000, 1500, 3, "run.mcap");
  const std::string inf2 = "            sec: 9223372036\n            nsec: 854775807\n";
  CHECK(y ==
        "version: 9\nstorage_identifier: mcap\nduration:\n  nanoseconds: 500\nstarting_time:\n"
        "  nanoseconds_since_epoch: 1000\nmessage_count: 3\ntopics_with_message_count:\n"
        "  - topic_metadata:\n      name: /chatter\n      type: std_msgs/msg/String\n"
        "      serialization_format: cdr\n      offered_qos_profiles:\n"
        "        - history: keep_last\n          depth: 10\n          reliability: best_effort\n"
        "          durability: transient_local\n          deadline:\n"
        "            sec: 1\n            nsec: 500000000\n          lifespan:\n" +
            inf2 +
            "          liveliness: manual_by_topic\n          liveliness_lease_duration:\n"
            "            sec: 2\n            nsec: 0\n"
            "          avoid_ros_namespace_conventions: false\n"
            "      type_description_hash: \"\"\n    message_count: 3\n"
            "compression_format: \"\"\ncompression_mode: \"\"\nrelative_file_paths:\n"
            "  - run.mcap\nfiles:\n  - path: run.mcap\n    starting_time:\n"
            "      nanoseconds_since_epoch: 1000\n    duration:\n      nanoseconds: 500\n"
            "    message_count: 3\ncustom_data: ~\nros_distro: \"\"");
  CHECK(rosbag2_metadata({}, 0, 0, 0, "e.mcap").find("topics_with_message_count:\n  []\n") !=
        std::string::npos);
}
