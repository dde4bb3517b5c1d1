// libFuzzer target: the RTPS message decoder (decode_message) over arbitrary datagrams.
//
// The visitor reads every byte of every view the decoder hands it (inline QoS, payloads,
// fragment data), so AddressSanitizer reports any view that reaches past the datagram, and it
// checks the promises of message.hpp on every submessage: sequence numbers >= 1, sets of at most
// 256 bits with nothing set past numBits, DATA_FRAG within DecodeLimits and carrying exactly the
// bytes of its fragments. A broken promise aborts (a crash to libFuzzer).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "wire/message.hpp"

namespace {

using namespace pubsub::wire;

constexpr uint32_t kMaxSample = 1u << 20;

void check(bool ok) {
  if (!ok) std::abort();
}

class TouchingVisitor final : public Visitor {
 public:
  explicit TouchingVisitor(const uint8_t* begin, size_t size) : begin_(begin), end_(begin + size) {}

  void on_data(const ReceiveContext& ctx, const DataSubmessage& m) override {
    check(m.sn >= 1);
    check(!(m.has_data && m.has_key));
    touch(m.inline_qos, m.inline_qos_size);
    touch(m.payload, m.payload_size);
    check((m.payload != nullptr) == (m.has_data || m.has_key));
    context(ctx);
  }
  void on_data_frag(const ReceiveContext& ctx, const DataFragSubmessage& m) override {
    check(m.sn >= 1);
    check(m.sample_size >= 1 && m.sample_size <= kMaxSample);
    check(m.fragment_start >= 1 && m.fragments_in_submessage >= 1 && m.fragment_size >= 1);
    const uint64_t total = (uint64_t{m.sample_size} + m.fragment_size - 1) / m.fragment_size;
    const uint64_t last = uint64_t{m.fragment_start} + m.fragments_in_submessage - 1;
    check(last <= total);
    const uint64_t begin = uint64_t{m.fragment_start - 1} * m.fragment_size;
    const uint64_t end =
        last * m.fragment_size < m.sample_size ? last * m.fragment_size : m.sample_size;
    check(m.data_size == end - begin);
    touch(m.data, m.data_size);
    context(ctx);
  }
  void on_heartbeat(const ReceiveContext& ctx, const HeartbeatSubmessage& m) override {
    check(m.first >= 1 && m.last >= m.first - 1);
    context(ctx);
  }
  void on_acknack(const ReceiveContext& ctx, const AckNackSubmessage& m) override {
    check(m.set.base >= 1);
    set(m.set);
    context(ctx);
  }
  void on_gap(const ReceiveContext& ctx, const GapSubmessage& m) override {
    check(m.gap_start >= 1 && m.gap_list.base >= m.gap_start);
    set(m.gap_list);
    context(ctx);
  }
  void on_nack_frag(const ReceiveContext& ctx, const NackFragSubmessage& m) override {
    check(m.sn >= 1 && m.fragments.base >= 1);
    set(m.fragments);
    context(ctx);
  }
  void on_heartbeat_frag(const ReceiveContext& ctx, const HeartbeatFragSubmessage& m) override {
    check(m.sn >= 1 && m.last_fragment >= 1);
    context(ctx);
  }

  uint64_t sum() const { return sum_; }

 private:
  // Reads every byte; the view must lie inside the datagram.
  void touch(const uint8_t* p, size_t n) {
    if (n == 0) return;
    check(p != nullptr && p >= begin_ && p + n <= end_);
    for (size_t i = 0; i < n; ++i) sum_ += p[i];
  }
  void set(const NumberSet& s) {
    check(s.num_bits <= 256);
    for (uint32_t i = s.num_bits; i < 256; ++i) check(!s.test(i));
    if (s.num_bits % 32) check((s.bits[s.num_bits / 32] & (~0u >> (s.num_bits % 32))) == 0);
    for (uint32_t i = 0; i < s.num_bits; ++i) sum_ += s.test(i);
  }
  void context(const ReceiveContext& ctx) {
    sum_ += ctx.source_prefix[0] + ctx.dest_prefix[11] + static_cast<uint64_t>(ctx.timestamp.ns);
  }

  const uint8_t* begin_;
  const uint8_t* end_;
  uint64_t sum_ = 0;
};

}  // namespace

// Keeps the byte reads alive (a global the optimizer cannot see the end of).
extern uint64_t rtps_message_fuzzer_sink;
uint64_t rtps_message_fuzzer_sink = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exact-size copy: in the standalone build the corpus lives in vectors whose capacity may
  // exceed their size, which would hide a read past the end from ASan.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size) std::memcpy(copy.get(), data, size);
  DecodeLimits limits;
  limits.max_sample_size = kMaxSample;
  TouchingVisitor v(copy.get(), size);
  const DecodeError e = decode_message(copy.get(), size, limits, v);
  check(static_cast<uint8_t>(e) < static_cast<uint8_t>(DecodeError::kCount));
  rtps_message_fuzzer_sink += v.sum();
  return 0;
}
