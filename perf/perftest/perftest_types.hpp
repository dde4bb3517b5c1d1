// The data topic's type as IDL and as XTypes TypeObjects, so that pubsub-perftest's writers are
// as self-describing as Cyclone DDS's: they announce TypeInformation in discovery and the
// participant's TypeLookup service answers getTypes with the TypeObjects (a recorder then stores
// the type; `pubsub-replay types` prints it).
#pragma once

#include <string>

#include "perftest.hpp"
#include "pubsub/participant.hpp"

namespace perftest {

// The IDL of the data topic's type: with -ddsperfCompat ddsperf's KeyedSeq; otherwise
// pubsub::perftest::Sample (KeyedSample with -keyed, key @key) laid out as the publisher writes it
// (XCDR1): seq, kind, timestamp, key, then datalen - 20 payload octets.
std::string data_type_idl(const Options& o);

// `topic` with its TypeInformation, after adding its TypeObjects to p's TypeLookup service. On
// a failure to encode the type (not expected: the IDL is ours) `topic` as it is and a warning.
pubsub::TopicDescription describe_type(pubsub::Participant& p, pubsub::TopicDescription topic,
                                       const Options& o);

}  // namespace perftest
