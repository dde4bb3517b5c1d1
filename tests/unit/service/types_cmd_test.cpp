// `pubsub-replay types` and the type source of `info`: recordings with type definitions written
// through storage (IDL-sourced, looked up, both, none); exact output and exit statuses.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.hpp"

using namespace replay_test;
namespace replay = service::replay;

namespace {

const std::string kPoseIdl = "module geo {\n  struct Pose {\n    double x;\n  };\n};\n";
const std::string kPoseLookup = "module geo {\n  struct Pose {\n    float x;\n  };\n};\n";
const std::string kSeqIdl = "struct KeyedSeq {\n  unsigned long seq;\n};\n";

struct TypesFixture {
  TempDir tmp;
  std::string dir = tmp.sub("rec");
  Model model;
  TypesFixture() {
    const size_t pose = model.add_topic({"robot/pose", "geo::Pose", false});
    const size_t pose2 = model.add_topic({"robot/pose2", "geo::Pose", false});
    const size_t seq = model.add_topic({"seq", "KeyedSeq", true});
    model.add_topic({"other", "geo::Unknown", false});
    add_record(model, model.add_writer(pose), 1, 0, storage::Bytes(8));
    add_record(model, model.add_writer(pose2), 1, 0, storage::Bytes(8));
    add_record(model, model.add_writer(seq), 1, 0, storage::Bytes(8));
    model.types.push_back({"geo::Pose", storage::TypeSource::kLookup, kPoseLookup, {}});
    model.types.push_back({"geo::Pose", storage::TypeSource::kIdl, kPoseIdl, {}});
    model.types.push_back({"KeyedSeq", storage::TypeSource::kLookup, kSeqIdl, {}});
    write_recording(dir, model);
  }
};

}  // namespace

TEST_CASE("types prints every recorded type once, the IDL one where both exist") {
  TypesFixture f;
  std::ostringstream out, err;
  CHECK(replay::types({f.dir, ""}, out, err) == replay::kExitOk);
  CHECK(out.str() == "// type KeyedSeq, from lookup; topics: seq\n" + kSeqIdl +
                         "// type geo::Pose, from idl (also lookup, not used); topics: robot/pose "
                         "robot/pose2\n" +
                         kPoseIdl);
  CHECK(err.str() == "pubsub-replay: warning: no type recorded for geo::Unknown\n");
}

TEST_CASE("types --topic prints that topic's type, exit 1 without one, 2 for no such topic") {
  TypesFixture f;
  {
    std::ostringstream out, err;
    CHECK(replay::types({f.dir, "seq"}, out, err) == replay::kExitOk);
    CHECK(out.str() == "// type KeyedSeq, from lookup; topics: seq\n" + kSeqIdl);
    CHECK(err.str().empty());
  }
  {
    std::ostringstream out, err;
    CHECK(replay::types({f.dir, "other"}, out, err) == replay::kExitProblems);
    CHECK(out.str().empty());
    CHECK(err.str() == "pubsub-replay: topic other (type geo::Unknown): no type recorded\n");
  }
  {
    std::ostringstream out, err;
    CHECK(replay::types({f.dir, "nope"}, out, err) == replay::kExitUsage);
    CHECK(err.str() == "pubsub-replay: no topic nope in " + f.dir + "\n");
  }
}

TEST_CASE("types on a recording without types: exit 1, on no recording: exit 2") {
  TempDir tmp;
  Model model;
  add_record(model, model.add_writer(model.add_topic({"a", "A", false})), 1, 0, storage::Bytes(4));
  const std::string dir = tmp.sub("rec");
  write_recording(dir, model);
  std::ostringstream out, err;
  CHECK(replay::types({dir, ""}, out, err) == replay::kExitProblems);
  CHECK(out.str().empty());
  CHECK(err.str() == "pubsub-replay: " + dir + ": no type definitions recorded\n");
  std::ostringstream out2, err2;
  CHECK(replay::types({tmp.sub("none"), ""}, out2, err2) == replay::kExitUsage);
}

TEST_CASE("info names where each topic's type came from") {
  TypesFixture f;
  std::ostringstream out, err;
  REQUIRE(replay::info({f.dir, true}, out, err) == replay::kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  REQUIRE(j["topics"].size() == 4);
  std::map<std::string, nlohmann::json> source;
  for (const auto& t : j["topics"]) source[t["name"]] = t["type_source"];
  CHECK(source["robot/pose"] == "idl");
  CHECK(source["robot/pose2"] == "idl");
  CHECK(source["seq"] == "lookup");
  CHECK(source["other"].is_null());
  std::ostringstream table, err2;
  REQUIRE(replay::info({f.dir, false}, table, err2) == replay::kExitOk);
  const std::string text = table.str();
  CHECK(text.find("TOPIC        TYPE          TYPE FROM  KEYED") != std::string::npos);
  CHECK(text.find("seq          KeyedSeq      lookup     yes") != std::string::npos);
  CHECK(text.find("other        geo::Unknown  -          no") != std::string::npos);
}
