// pubsub_qos_peer: the options mapped onto libpubsub - participant, topic, writer and reader
// QoS - and the creation of the participant. Main thread only.
//
// Where each contract option goes (README.md, "pubsub_qos_peer"): reliability, durability,
// history and max_blocking_time are WriterQos/ReaderQos fields; every other policy, group_data
// and topic_data included, is in their `policies` (pubsub::Policies), announced in discovery
// and checked against the other side's; partitions and the data representation are
// TopicDescription fields. libpubsub has no topic, publisher or subscriber entity.
#pragma once

#include <memory>

#include "options.hpp"
#include "pubsub/participant.hpp"

namespace pubsub_peer {

pubsub::TopicDescription topic_description(const Options& o);
pubsub::WriterQos writer_qos(const Options& o);
pubsub::ReaderQos reader_qos(const Options& o);

// The participant on --domain and --nic (libpubsub's log goes to err()); nullptr after a
// message on stderr.
std::unique_ptr<pubsub::Participant> create_participant(const Options& o);

}  // namespace pubsub_peer
