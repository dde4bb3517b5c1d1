#include "service/recording_schema.hpp"

#include <cinttypes>
#include <cstdio>

#include <cstring>

#include "common/hex.hpp"

namespace service {

RecordedQos recorded_qos(const pubsub::TopicInfo& t) {
  RecordedQos q;
  q.reliability = t.reliability;
  q.durability = t.durability;
  q.history = t.history;
  q.max_blocking_time = t.max_blocking_time;
  q.partitions = t.partitions;
  q.data_representation = t.data_representation;
  q.policies = t.policies;
  return q;
}

bool xcdr2_encapsulation(storage::ByteSpan sample) {
  if (sample.size() < 2) return false;
  const auto kind =
      static_cast<uint16_t>(static_cast<uint8_t>(sample[0]) << 8 | static_cast<uint8_t>(sample[1]));
  // CDR2_BE/LE, D_CDR2_BE/LE, PL_CDR2_BE/LE (XTypes 7.6.3.1.2).
  return kind >= 0x0006 && kind <= 0x000b;
}

void infer_representation(RecordedQos& q, storage::ByteSpan first) {
  if (q.data_representation.empty() && xcdr2_encapsulation(first)) q.data_representation = {2};
}

RecordedQos recorded_qos(const pubsub::WriterInfo& w) {
  RecordedQos q = recorded_qos(w.topic);
  q.participant = RecordedParticipant{static_cast<uint16_t>(w.vendor[0] << 8 | w.vendor[1]),
                                      w.participant_user_data, w.participant_lease};
  return q;
}

storage::TopicDef topic_def(const pubsub::TopicInfo& t) {
  storage::TopicDef d;
  d.name = t.name;
  d.type_name = t.type_name;
  d.keyed = t.keyed;
  d.qos = encode_qos(recorded_qos(t));
  d.type_info.resize(t.type_information.size());
  if (!t.type_information.empty()) {
    std::memcpy(d.type_info.data(), t.type_information.data(), t.type_information.size());
  }
  return d;
}

pubsub::TopicDescription replay_topic(const storage::TopicDef& def, const RecordedQos& qos) {
  pubsub::TopicDescription t;
  t.name = def.name;
  t.type_name = def.type_name;
  t.keyed = def.keyed;
  t.partitions = qos.partitions;
  t.data_representation = qos.data_representation;
  t.type_information.resize(def.type_info.size());
  if (!def.type_info.empty()) {
    std::memcpy(t.type_information.data(), def.type_info.data(), def.type_info.size());
  }
  return t;
}

pubsub::WriterQos replay_writer_qos(const RecordedQos& qos) {
  pubsub::WriterQos w;
  w.reliability = qos.reliability;
  // Every policy as recorded, so that every reader of the original system matches. The
  // recorded samples are re-published live, in order, from SN 1: a volatile writer keeps each
  // until its readers have it; a durable one also keeps what a late joiner would have got from
  // the original (its history depth per instance).
  w.durability = qos.durability;
  w.history = qos.durability >= pubsub::DurabilityKind::kTransientLocal
                  ? qos.history
                  : pubsub::HistoryQos{pubsub::HistoryKind::kKeepAll, 1};
  w.max_blocking_time = std::chrono::seconds(1);
  w.policies = qos.policies;
  w.policies.other.clear();
  return w;
}

std::string guid_hex(const pubsub::Guid& g) {
  const auto b = g.bytes();
  return common::to_hex(b);
}

std::string clock_note(const ClockOffset& c) {
  const auto secs = [](int64_t ns, bool sign) {
    const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    char b[48];
    std::snprintf(b, sizeof b, "%s%" PRIu64 ".%09" PRIu64,
                  ns < 0 ? "-"
                  : sign ? "+"
                         : "",
                  a / 1000000000u, a % 1000000000u);
    return std::string(b);
  };
  return secs(c.offset_ns, true) + " s, error " + secs(c.error_ns, false) + " s";
}

std::optional<ClockOffset> parse_clock_note(const std::string& note) {
  // Exact: [+-]S.NNNNNNNNN s, error S.NNNNNNNNN s
  auto number = [](const std::string& s, size_t& i, int64_t& out) {
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t whole = 0;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && digits < 12) {
      whole = whole * 10 + static_cast<uint64_t>(s[i++] - '0');
      ++digits;
    }
    if (digits == 0 || i + 10 > s.size() || s[i] != '.') return false;
    uint64_t frac = 0;
    for (size_t k = 1; k <= 9; ++k) {
      const char c = s[i + k];
      if (c < '0' || c > '9') return false;
      frac = frac * 10 + static_cast<uint64_t>(c - '0');
    }
    i += 10;
    const int64_t v = static_cast<int64_t>(whole * 1000000000u + frac);
    out = neg ? -v : v;
    return true;
  };
  ClockOffset c;
  size_t i = 0;
  if (!number(note, i, c.offset_ns) || note.compare(i, 10, " s, error ") != 0) return std::nullopt;
  i += 10;
  if (i < note.size() && (note[i] == '+' || note[i] == '-')) return std::nullopt;
  if (!number(note, i, c.error_ns) || note.substr(i) != " s") return std::nullopt;
  return c;
}

std::optional<ClockOffset> measured_offset(const std::vector<storage::Mark>& a_marks,
                                           const std::string& a_member,
                                           const std::vector<storage::Mark>& b_marks,
                                           const std::string& b_member) {
  std::optional<ClockOffset> best;
  auto consider = [&](const std::vector<storage::Mark>& marks, const std::string& other,
                      int64_t sign) {
    for (const auto& mk : marks) {
      if (mk.kind != storage::MarkKind::kClockOffset || mk.name != other) continue;
      auto c = parse_clock_note(mk.note);
      if (!c || (best && best->error_ns <= c->error_ns)) continue;
      best = ClockOffset{sign * c->offset_ns, c->error_ns};
    }
  };
  if (a_member.empty() || b_member.empty()) return std::nullopt;
  consider(a_marks, b_member, 1);
  consider(b_marks, a_member, -1);
  return best;
}

}  // namespace service
