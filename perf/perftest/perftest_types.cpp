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
  for (const auto& t : enc->types) {
    pubsub::TypeObjectEntry m, c;
    m.id[0] = types::kEkMinimal;
    std::copy(t.minimal_hash.begin(), t.minimal_hash.end(), m.id.begin() + 1);
    m.type_object = t.minimal_object;
    c.id[0] = types::kEkComplete;
    std::copy(t.complete_hash.begin(), t.complete_hash.end(), c.id.begin() + 1);
    c.type_object = t.complete_object;
    entries.push_back(std::move(m));
    entries.push_back(std::move(c));
  }
  p.add_type_objects(entries);
  topic.type_information = enc->type_information;
  return topic;
}

}  // namespace perftest
