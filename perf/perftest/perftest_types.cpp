// pubsub-perftest's data type as IDL and TypeObjects (see perftest_types.hpp).
#include "perftest_types.hpp"

#include <cstdio>

#include "types/idl.hpp"
#include "types/type_object_writer.hpp"

namespace perftest {

std::string data_type_idl(const Options& o) {
  if (o.ddsperf_compat) {
    return "struct KeyedSeq {\n  unsigned long seq;\n  @key unsigned long keyval;\n"
           "  sequence<octet> baggage;\n};\n";
  }
  std::string idl = "module pubsub {\nmodule perftest {\n@final\nstruct ";
  idl += o.keyed ? "KeyedSample" : "Sample";
  idl += " {\n  unsigned long seq;\n  unsigned long kind;\n  unsigned long long timestamp;\n  ";
  idl += o.keyed ? "@key unsigned long key;\n" : "unsigned long key;\n";
  constexpr uint32_t kHeader = 20;  // seq, kind, timestamp, key
  if (o.datalen > kHeader) idl += "  octet payload[" + std::to_string(o.datalen - kHeader) + "];\n";
  idl += "};\n};\n};\n";
  return idl;
}

pubsub::TopicDescription describe_type(pubsub::Participant& p, pubsub::TopicDescription topic,
                                       const Options& o) {
  auto warn = [&](const std::string& why) {
    std::fprintf(stderr, "pubsub-perftest: warning: type %s not announced: %s\n",
                 topic.type_name.c_str(), why.c_str());
    return topic;
  };
  auto lib = types::parse_idl(data_type_idl(o), "pubsub-perftest data type");
  if (!lib) return warn(lib.error().message);
  auto id = lib->find(topic.type_name);
  if (!id) return warn("not in its IDL");
  auto enc = types::encode_type_objects(*lib, *id);
  if (!enc) return warn(enc.error().message);
  std::vector<pubsub::TypeObjectEntry> entries;
  for (const auto& pair : enc->pairs())
    entries.push_back({types::hashed_type_id(pair.equivalence_kind, pair.hash), pair.type_object});
  p.add_type_objects(entries);
  topic.type_information = enc->type_information;
  return topic;
}

}  // namespace perftest
