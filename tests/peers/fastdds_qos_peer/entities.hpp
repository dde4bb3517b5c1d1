// fastdds_qos_peer: the Fast DDS entities of one peer (participant, type, topic, publisher or
// subscriber, writer or reader) with the QoS of the command line.
//
// Created and deleted by the main thread. The writer or reader is created disabled (the
// publisher's/subscriber's entity factory does not auto-enable) so that "ready" is printed
// before any of its listener's events; enable() then starts it. The destructor deletes every
// entity, after which no listener runs any more: listeners must outlive the Participant.
#pragma once

#include <string>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>

#include "options.hpp"

namespace qos_peer {

class Participant {
 public:
  Participant() = default;
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;
  ~Participant();

  // Participant (UDPv4 only), type and topic; false with a message on stderr.
  bool create(const Options& o);
  // Publisher and a disabled writer; nullptr with a message on stderr.
  dds::DataWriter* create_writer(const Options& o, dds::DataWriterListener* listener);
  // Subscriber and a disabled reader; nullptr with a message on stderr.
  dds::DataReader* create_reader(const Options& o, dds::DataReaderListener* listener);

  dds::DomainParticipant* get() const { return participant_; }

 private:
  dds::DomainParticipant* participant_ = nullptr;
  dds::Topic* topic_ = nullptr;
};

}  // namespace qos_peer
