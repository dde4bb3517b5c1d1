// DdsControl: the recorder's control commands as DDS requests and replies on its own domain
// (config control.dds and control.allow; README "Remote control", "DDS control"). The commands
// and replies are the control socket's (control_commands.hpp); only the transport differs.
//
// OVERVIEW
// - Wire form. Two unkeyed, reliable topics; their types are final structs whose bytes are the
//   same in XCDR1 and XCDR2 (every member is at an offset its alignment divides in both), so
//   PLAIN_CDR and PLAIN_CDR2 are accepted in either byte order; replies go out as CDR_LE.
//     module pubsub_recorder {
//       @final struct ControlRequest {   // topic "pubsub_recorder/control/request"
//         unsigned long long id;         // chosen by the client, echoed in the reply
//         string request;                // one JSON object, as a control socket line:
//       };                               //   {"cmd":"tag","name":"x"}
//       @final struct ControlReply {     // topic "pubsub_recorder/control/reply"
//         octet requester[16];           // GUID of the writer the request came from
//         unsigned long long id;         // the request's id
//         string reply;                  // the JSON reply: {"ok":true,...} / {"ok":false,
//       };                               //   "error":"..."}
//     };
//   A client takes the reply whose requester is its request writer's GUID and whose id is its
//   request's. The reply writer is TRANSIENT_LOCAL with KEEP_LAST kReplyHistory: a client
//   reader (TRANSIENT_LOCAL too) the recorder matches only after it answered still gets the
//   reply. Every recorder on the domain gets every request; each allowed one answers.
// - Who may: the request's writer GUID names its participant; that participant must have
//   announced in discovery (SPDP, its default unicast locators) an IPv4 address inside one of
//   the `allow` networks. Otherwise the reply is {"ok":false,"error":"participant GUID
//   (ADDRESSES) is not in control.allow"}, a warning is logged and nothing is carried out. This
//   filters on what a participant says about itself. With a key (control.key_file), a request
//   must also be signed with it (control_auth.hpp: HMAC-SHA256 over the request, the domain,
//   the sender, a time and a nonce), and the replies to signed requests are signed. Replies -
//   the status included - reach every reader of the reply topic: nothing is encrypted.
// - Refusals are counted by reason (refused()) and logged at most once per kLogEvery per reason,
//   the next line saying how many were not logged.
// - Threads. The request reader's listener runs on a participant receive thread: it only
//   decodes and queues (at most kMaxQueued; more are dropped with a warning). One worker thread,
//   started by start() and joined by the destructor, takes the requests in order: checks the
//   sender (Participant::discovered_participants), runs the handler - which may block: split and
//   stop wait for storage - and writes the reply.
// - Ownership: DdsControl owns its reader, writer and worker; the participant is the caller's
//   and must outlive it. The destructor removes the reader (nothing new arrives), lets the
//   worker finish the request it is on, answers queued ones {"ok":false,"error":"the recorder
//   is stopping"}, waits up to 1 s for the replies to be acknowledged, then removes the writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/recorder_config.hpp"
#include "control_auth.hpp"
#include "dds_control_wire.hpp"
#include "pubsub/participant.hpp"
#include "service/recording_schema.hpp"
#include "service/result.hpp"

namespace service {

inline constexpr const char* kControlRequestTopic = "pubsub_recorder/control/request";
inline constexpr const char* kControlReplyTopic = "pubsub_recorder/control/reply";
inline constexpr const char* kControlRequestType = "pubsub_recorder::ControlRequest";
inline constexpr const char* kControlReplyType = "pubsub_recorder::ControlReply";
// What the recorder's RawReader excludes (Recorder::Impl::open_reader): the control topics are
// never recorded.
inline constexpr const char* kControlTopicsPattern = "pubsub_recorder/control/*";

// What DdsControl asks of a request besides control.allow.
struct DdsControlAuth {
  std::optional<ControlKey> key;  // none: requests are not signed
  std::chrono::milliseconds max_skew{30000};
  // The clock requests' times are checked against (tests set it).
  std::function<int64_t()> now_ms = unix_ms_now;
};

class DdsControl {
 public:
  static constexpr size_t kMaxRequestBytes = 64 * 1024;  // the JSON text, as the socket's line
  static constexpr size_t kMaxQueued = 64;
  static constexpr int32_t kReplyHistory = 16;
  // The reply to an allowed request; null = no reply at all (a request for another recording
  // set: the recorder is not addressed).
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;
  using Log = std::function<void(const std::string& line)>;

  static constexpr std::chrono::seconds kLogEvery{10};
  using Auth = DdsControlAuth;

  // Creates the reply writer, the worker and the request reader on `participant`. `warn` gets
  // the refusals and dropped requests (from the worker and the receive threads).
  static Result<std::unique_ptr<DdsControl>> start(pubsub::Participant& participant,
                                                   std::vector<config::Ipv4Network> allow,
                                                   Handler handler, Log warn, Auth auth = {});

  // Requests refused so far, by reason. Outlives the DdsControl: a status may read it while the
  // control is being stopped.
  std::shared_ptr<const RefusalCounts> refusals() const;
  ~DdsControl();
  DdsControl(const DdsControl&) = delete;
  DdsControl& operator=(const DdsControl&) = delete;

  struct Impl;

 private:
  explicit DdsControl(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The user data a recorder's participant announces in discovery: "pubsub-recorder", or in a
// recording set (control.set) "pubsub-recorder set=NAME": how ctl --dds --set finds the members.
std::string recorder_user_data(const std::string& set);

// Whether a request asks for the recorder's times in its reply ({"clock":true}): the reply then
// has "recv_ns" (the request's arrival) and "send_ns" (the reply's departure), both on the
// recorder's reception clock (the time base of its recording), for an NTP-style offset:
// offset = ((recv - t1) + (send - t4)) / 2, error bound = ((t4 - t1) - (send - recv)) / 2, with
// t1 and t4 the requester's send and receive times. Any command may ask.
bool asks_for_times(const nlohmann::json& request);

// From a reply with "recv_ns" and "send_ns" (asks_for_times), sent at t1 and received at t4 on
// our clock; none when the reply has no times, or they are inconsistent (the reply left before
// the request arrived, or came back before it left).
std::optional<ClockOffset> clock_offset(const nlohmann::json& reply, int64_t t1_ns, int64_t t4_ns);

// "198.18.0.1, 10.0.0.2": the IPv4 addresses of a participant's unicast locators, each once.
std::string announced_addresses(const pubsub::DiscoveredParticipant& participant);

// Client side (pubsub-recorder ctl --dds): creates a request writer and a reply reader on
// `participant`, waits for a recorder's request reader to match, sends `request` and waits for
// its reply; all within `timeout`. With `key` the request is signed and the reply must be
// (control_auth.hpp). Errors: kTimeout "no recorder answers on domain N" (no request reader
// matched), kTimeout "no reply from a recorder on domain N within T ms", kIo (the request could
// not be written), kCorrupt (a reply that is not one JSON object, or not signed by the key).
Result<nlohmann::json> dds_control_request(pubsub::Participant& participant,
                                           const nlohmann::json& request,
                                           std::chrono::milliseconds timeout,
                                           const ControlKey* key = nullptr);

// One member of a recording set as ctl --dds --set saw it (dds_set_request).
struct SetMember {
  pubsub::GuidPrefix participant{};
  std::string addresses;                // as announced (announced_addresses)
  std::optional<nlohmann::json> reply;  // none: no reply within the timeout
  std::optional<ClockOffset> clock;     // its reception clock minus our wall clock
};

// Client side of a recording set (dds_control_set.cpp): finds the recorders whose participant
// announces set `set` (recorder_user_data) - `members` of them, or with 0 those seen until
// discovery has been quiet for 2 s - waits until each has matched the request writer, sends
// `request` with "set" added and collects each member's reply until all have answered or
// `timeout` (which covers everything) is over. With `key` the request is signed and each reply
// must be. Errors: kTimeout "no recorder of set NAME on domain N" (none found), "only K of N
// recorders of set NAME on domain D" (--members not reached); kIo (not written).
Result<std::vector<SetMember>> dds_set_request(pubsub::Participant& participant,
                                               const nlohmann::json& request,
                                               const std::string& set, size_t members,
                                               std::chrono::milliseconds timeout,
                                               const ControlKey* key = nullptr);

}  // namespace service
