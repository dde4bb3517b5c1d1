// A log-linear histogram of non-negative nanosecond values (HdrHistogram-like, 32 sub-buckets per
// power of two: percentiles within ~3%, the maximum exact). Fixed size, O(1) record, no locking:
// one owner thread.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace service::replay::detail {

class Histogram {
 public:
  void record(int64_t v) {
    if (v < 0) v = 0;
    ++counts_[index(static_cast<uint64_t>(v))];
    ++count_;
    max_ = std::max(max_, v);
  }
  void reset() {
    counts_.fill(0);
    count_ = 0;
    max_ = 0;
  }
  uint64_t count() const { return count_; }
  int64_t max() const { return max_; }
  // The value at quantile q (0..1): the middle of its bucket, never above the maximum.
  int64_t percentile(double q) const {
    if (count_ == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(count_) + 0.999999);
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min<int64_t>(middle(i), max_);
    }
    return max_;
  }

 private:
  static constexpr int kSubBits = 5;
  static constexpr uint64_t kLinear = 2u << kSubBits;  // values below are exact
  static constexpr size_t kBuckets = kLinear + (63 - kSubBits - 1) * (1u << kSubBits);

  static size_t index(uint64_t v) {
    if (v < kLinear) return static_cast<size_t>(v);
    const int e = 63 - std::countl_zero(v);  // >= kSubBits + 1
    const uint64_t sub = (v >> (e - kSubBits)) & ((1u << kSubBits) - 1);
    return static_cast<size_t>(kLinear +
                               static_cast<uint64_t>(e - kSubBits - 1) * (1u << kSubBits) + sub);
  }
  static int64_t middle(size_t i) {
    if (i < kLinear) return static_cast<int64_t>(i);
    const size_t k = i - kLinear;
    const int e = static_cast<int>(k >> kSubBits) + kSubBits + 1;
    const uint64_t sub = k & ((1u << kSubBits) - 1);
    const uint64_t lower = ((1ull << kSubBits) + sub) << (e - kSubBits);
    return static_cast<int64_t>(lower + (1ull << (e - kSubBits)) / 2);
  }

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  int64_t max_ = 0;
};

}  // namespace service::replay::detail
