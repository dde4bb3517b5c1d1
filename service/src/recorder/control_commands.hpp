// The control commands of pubsub-recorder (README "Remote control"): JSON requests, as the control
// socket receives them, carried out on a Recorder; and the status as JSON.
//
//   {"cmd":"status"}                          -> {"ok":true,"status":{...}}
//   {"cmd":"start","recording_id":"x"}       -> {"ok":true,"time_ns":T,...} (control.armed)
//   {"cmd":"pause"}  {"cmd":"pause","topics":["a","b"]}    (resume alike)
//   {"cmd":"split"}                           -> {"ok":true,"segment":N,...}
//   {"cmd":"tag","name":"x","note":"..."}     -> {"ok":true,"time_ns":T,...}
//   {"cmd":"snapshot"}  {"cmd":"stop"}
//   {"cmd":"clock","clock":true}              -> {"ok":true,"recv_ns":T2,"send_ns":T3,...} over
//                                                DDS: a recording set's members measure their
//                                                clock offsets with it (set_clock.hpp)
// Every reply has "ok"; a refusal has "error" (the reason), a success "message" (one line).
#pragma once

#include <nlohmann/json.hpp>

#include "service/recorder.hpp"

namespace service {

nlohmann::json status_json(const RecorderStatus& status);
nlohmann::json handle_control(Recorder& recorder, const nlohmann::json& request);
// {"ok":false,"error":why}: every refusal of every control path (socket, DDS, commands).
nlohmann::json refusal(const std::string& why);

}  // namespace service
