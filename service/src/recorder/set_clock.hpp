// SetClock: a recording set's member measures its clock's offset to every other member of the set
// through the DDS control topics (issue 35, item 3; README "Clocks of a recording set").
//
// OVERVIEW
// - A member is a participant announcing the set (recorder_user_data), other than our own.
// - Every kPoll one thread looks at the members discovery shows. Those due (never measured,
//   kInterval since the last measurement, or kRetry since an attempt without an answer) and whose
//   request reader has matched our request writer get a measurement: kRounds requests
//   {"cmd":"clock","clock":true,"set":S} kSpacing apart (one write reaches every member), each
//   answered with the member's receive and send times (asks_for_times); then up to kWait for the
//   replies. Per member the reply with the smallest round trip gives the offset (their clock
//   minus ours) and its error bound (clock_offset).
// - Times are the participant's reception clock: the time base of the recording, so the offsets
//   correct the recording's reception times as they are.
// - Each measurement goes to `on_offset` on the prober thread (the recorder logs it and puts a
//   clock_offset mark into its recording).
// - With a key the requests are signed and the replies must be (control_auth.hpp); a member's
//   control.allow must hold our address, as for any request.
// - Threads and ownership: the reply reader's callback (a participant receive thread) only stores
//   replies under `mu`. The prober thread does the rest. The destructor stops and joins it, then
//   removes the endpoints; the participant is the caller's and must outlive the SetClock.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "control_auth.hpp"
#include "dds_control.hpp"
#include "pubsub/participant.hpp"
#include "service/result.hpp"

namespace service {

class SetClock {
 public:
  struct Offset {
    pubsub::GuidPrefix participant{};
    std::string member;  // "host H, address A", as the member's set_member mark says
    ClockOffset clock;   // the member's clock minus ours
    int rounds = 0;      // replies this measurement had
  };
  struct Options {
    std::string set;
    std::optional<ControlKey> key;  // sign the requests (control.key_file)
    std::function<void(const Offset&)> on_offset;
    std::function<void(const std::string&)> warn;
    std::chrono::milliseconds poll{500}, interval{10000}, retry{2000}, spacing{20}, wait{1000};
    int rounds = 4;
  };

  static Result<std::unique_ptr<SetClock>> start(pubsub::Participant& participant, Options options);
  ~SetClock();
  SetClock(const SetClock&) = delete;
  SetClock& operator=(const SetClock&) = delete;

  struct Impl;

 private:
  explicit SetClock(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "host cell-a, address 198.18.0.1": how a member's reply ("member") names it, as its
// set_member mark's note does; "" when the reply does not say.
std::string member_note(const nlohmann::json& reply);

}  // namespace service
