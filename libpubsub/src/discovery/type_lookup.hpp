// TypeLookupClient: our side of the XTypes TypeLookup service as a client of getTypes - the
// builtin request writer (ENTITYID_TL_SVC_REQ_WRITER 0x000300c3) and reply reader
// (0x000301c4), both reliable and volatile like Cyclone DDS's, with proxies for every
// participant whose SPDP announcement offers the service's request reader / reply writer.
//
// OVERVIEW
// - request() (any thread) writes one request and remembers it by its sequence number with
//   the caller's callback and a deadline.
// - The receive thread delivers replies (on_reply through the reply reader): a reply to one of
//   our pending requests goes to its callback (outside mu_); the callback says when it is done.
// - The event thread's on_timer() ends requests past their deadline with kTimeout, and runs the
//   two endpoints' timers.
// Owned by Discovery, which routes the builtin traffic for these entity ids here.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "pubsub/participant.hpp"
#include "rtps/reader.hpp"
#include "rtps/writer.hpp"
#include "wire/discovery_data.hpp"
#include "wire/type_lookup.hpp"

namespace pubsub::discovery {

class TypeLookupClient {
 public:
  TypeLookupClient(Transport& transport, const GuidPrefix& prefix, size_t max_sample_size);

  // SPDP: a participant appeared (proxies for the endpoints it offers) or left.
  void add_participant(const wire::ParticipantData& p, rtps::SteadyTime now);
  void remove_participant(const GuidPrefix& prefix);
  // Does the participant offer getTypes (a request reader and a reply writer)?
  bool serves(const GuidPrefix& prefix) const;

  void request(std::span<const wire::HashedTypeId> type_ids, Duration timeout,
               TypeLookupCallback done);

  rtps::StatefulWriter& writer() { return *writer_; }
  rtps::StatefulReader& reader() { return *reader_; }
  rtps::SteadyTime on_timer(rtps::SteadyTime now);

 private:
  bool on_reply(const rtps::ReceivedSample& s);

  struct Pending {
    TypeLookupCallback done;
    rtps::SteadyTime deadline;
  };
  std::unique_ptr<rtps::StatefulWriter> writer_;
  std::unique_ptr<rtps::StatefulReader> reader_;
  mutable std::mutex mu_;
  std::map<SequenceNumber, Pending> pending_;  // by the request's sequence number
  std::map<GuidPrefix, bool> serving_;         // participants offering the service
  SequenceNumber next_sn_ = 1;                 // the writer's: one request per sample
};

// TypeLookupServer: our side of the service as a server of getTypes - the builtin request
// reader (ENTITYID_TL_SVC_REQ_READER 0x000300c4) and reply writer (0x000301c3), with proxies for
// every participant whose SPDP announcement offers a request writer / reply reader. It answers
// from the TypeObjects registered with add_types() (what our writers announce in their
// TypeInformation): every requested identifier it holds, in one reply, written to every
// matched reply reader (the requester tells its reply by the request's identity).
// Threads: requests arrive on the receive thread (on_request, which writes the reply);
// add_types() from any thread; on_timer() on the event thread.
class TypeLookupServer {
 public:
  TypeLookupServer(Transport& transport, const GuidPrefix& prefix, size_t max_sample_size);

  void add_participant(const wire::ParticipantData& p, rtps::SteadyTime now);
  void remove_participant(const GuidPrefix& prefix);
  void add_types(std::span<const TypeObjectEntry> types);

  rtps::StatefulWriter& writer() { return *writer_; }
  rtps::StatefulReader& reader() { return *reader_; }
  rtps::SteadyTime on_timer(rtps::SteadyTime now);

 private:
  bool on_request(const rtps::ReceivedSample& s);

  std::unique_ptr<rtps::StatefulWriter> writer_;
  std::unique_ptr<rtps::StatefulReader> reader_;
  std::mutex mu_;
  std::map<wire::HashedTypeId, std::vector<uint8_t>> types_;  // identifier -> TypeObject
};

}  // namespace pubsub::discovery
