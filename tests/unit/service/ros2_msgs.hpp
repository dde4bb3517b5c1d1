// The ROS 2 message types of the ROS 2 stand-in peers (tests/peers/ros2_stand_in/ros2_msgs.idl),
// parsed, for the ROS 2 schema and MCAP import tests.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "types/idl.hpp"

namespace replay_test {

inline types::TypeLibrary ros2_msgs_idl() {
  std::ifstream in(PUBSUB_SOURCE_DIR "/tests/peers/ros2_stand_in/ros2_msgs.idl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!text.empty());
  auto lib = types::parse_idl(text, "ros2_msgs.idl");
  REQUIRE(lib);
  return std::move(*lib);
}

}  // namespace replay_test
