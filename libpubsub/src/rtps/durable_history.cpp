// DurableHistory (durable_history.hpp): copies of the samples a late joiner gets, per instance.
#include "rtps/durable_history.hpp"

#include <algorithm>
#include <cstring>

namespace pubsub::rtps {

size_t DurableHistory::KeyHashOf::operator()(const KeyHash& k) const {
  uint64_t a, b;
  std::memcpy(&a, k.value.data(), 8);
  std::memcpy(&b, k.value.data() + 8, 8);
  return static_cast<size_t>(a * 0x9e3779b97f4a7c15ull ^ b);
}

DurableHistory::DurableHistory(HistoryQos history, size_t max_samples, size_t max_bytes)
    : history_(history), max_samples_(std::max<size_t>(max_samples, 1)), max_bytes_(max_bytes) {}

void DurableHistory::add(const CacheChange& c, const uint8_t* payload) {
  if (c.size > max_bytes_) return;  // can never be kept (nor written: the ring refuses it too)
  const KeyHash key = instance_of(c);
  if (history_.kind == HistoryKind::kKeepLast) {
    const auto depth = static_cast<size_t>(std::max(history_.depth, 1));
    for (auto it = instances_.find(key); it != instances_.end() && it->second.size() >= depth;
         it = instances_.find(key)) {
      drop(it->second.front());  // may erase the instance's entry
    }
  }
  while (!samples_.empty() && (samples_.size() >= max_samples_ || bytes_ + c.size > max_bytes_)) {
    drop(samples_.begin()->first);
  }
  Kept k;
  k.change = c;
  if (!spare_.empty()) {
    k.payload = std::move(spare_.back());
    spare_.pop_back();
  }
  k.payload.assign(payload, payload + c.size);
  bytes_ += c.size;
  instances_[key].push_back(c.sn);
  samples_.emplace(c.sn, std::move(k));
}

void DurableHistory::drop(SequenceNumber sn) {
  auto it = samples_.find(sn);
  if (it == samples_.end()) return;
  const KeyHash key = instance_of(it->second.change);
  bytes_ -= it->second.change.size;
  spare_.push_back(std::move(it->second.payload));
  samples_.erase(it);
  auto inst = instances_.find(key);
  if (inst == instances_.end()) return;
  auto& sns = inst->second;
  sns.erase(std::remove(sns.begin(), sns.end(), sn), sns.end());
  if (sns.empty()) instances_.erase(inst);
  if (spare_.size() > 64) spare_.pop_back();
}

const CacheChange* DurableHistory::find(SequenceNumber sn) const {
  auto it = samples_.find(sn);
  return it == samples_.end() ? nullptr : &it->second.change;
}

const uint8_t* DurableHistory::data(const CacheChange& c) const {
  auto it = samples_.find(c.sn);
  return it == samples_.end() ? nullptr : it->second.payload.data();
}

bool DurableHistory::holds(const CacheChange& c) const {
  auto it = samples_.find(c.sn);
  return it != samples_.end() && &it->second.change == &c;
}

}  // namespace pubsub::rtps
