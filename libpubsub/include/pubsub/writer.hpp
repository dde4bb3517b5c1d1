// Writer: publishes serialized samples of one topic. Created by Participant::create_writer.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "pubsub/basics.hpp"
#include "pubsub/qos.hpp"
#include "pubsub/stats.hpp"

namespace pubsub {

namespace detail {
class WriterImpl;
}

struct WriteOptions {
  // Instance of a keyed topic (see KeyHash::from_key_cdr_be). Required by write() on keyed
  // topics; optional for write_serialized(), whose payload carries the key (replay of samples
  // recorded from writers that send no key hash, as Cyclone DDS by default).
  const KeyHash* key_hash = nullptr;
  // PID_STATUS_INFO: 1 disposed, 2 unregistered (the payload is then the serialized key).
  uint32_t status_info = 0;
  // Source timestamp; default: now.
  std::optional<Time> timestamp;
};

class Writer;

// A buffer lent by a writer (Writer::loan): the application serializes a sample straight into
// the writer's history - with shared memory, into the segment same-host readers read from - and
// publishes it with Writer::write(Loan&&), without a copy. Rules:
// - a loan is valid until it is written or released; the destructor releases an unwritten one;
// - a writer lends one buffer at a time: its other write() and loan() calls wait (up to
//   max_blocking_time) while a loan is outstanding, so fill it and write it promptly;
// - release() or write() of a loan that was already released or written is rejected
//   (kInvalidArgument), never a double publication.
class Loan {
 public:
  Loan() = default;
  Loan(Loan&& o) noexcept { *this = std::move(o); }
  Loan& operator=(Loan&& o) noexcept;
  ~Loan();
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;

  // The CDR body to fill (little endian, without the encapsulation header).
  std::span<std::byte> data() const { return {data_, size_}; }
  size_t size() const { return size_; }
  bool valid() const { return writer_ != nullptr; }
  // Gives the buffer back unwritten.
  Result<void> release();

 private:
  friend class Writer;
  std::shared_ptr<detail::WriterImpl> writer_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

class Writer {
 public:
  ~Writer();  // unregisters the writer (readers see it go)

  // Publishes one sample given as the little-endian CDR (XCDR1) serialization of the data type,
  // without the encapsulation header, which the writer adds (CDR_LE, padded to 4 bytes).
  // Reliable KEEP_ALL: blocks while the history is full of unacknowledged samples, up to
  // max_blocking_time, then returns kTimeout. Thread-safe.
  Result<void> write(Bytes cdr_body, const WriteOptions& options = {});
  // Publishes a payload that already starts with its encapsulation header (replay of recorded
  // samples, byte for byte).
  // An empty payload is allowed for a dispose or unregister with a key hash (status_info and
  // key_hash set): it goes out as the key hash alone, as Fast DDS sends them.
  Result<void> write_serialized(Bytes payload, const WriteOptions& options = {});
  // Lends a buffer for a sample of `body_size` bytes (see Loan). Waits for history space as
  // write() does.
  Result<Loan> loan(size_t body_size);
  // Publishes a loaned sample; the loan is consumed (invalid afterwards) whatever the outcome.
  Result<void> write(Loan&& loan, const WriteOptions& options = {});
  // Sends a partially filled batch now.
  void flush();

  size_t matched_readers() const;
  // The GUIDs of the readers matched now (a reader leaves when it is deleted or its
  // participant's lease expires).
  std::vector<Guid> matched_reader_guids() const;
  // Waits until n readers are matched and every reliable one has acknowledged once (so it will
  // see everything written afterwards). False on timeout.
  bool wait_for_readers(size_t n, Duration timeout);
  // Waits until every reliable reader acknowledged everything written so far.
  bool wait_for_acknowledgments(Duration timeout);

  const Guid& guid() const;
  WriterStats stats() const;

 private:
  friend class Participant;
  explicit Writer(std::shared_ptr<detail::WriterImpl> impl);
  std::shared_ptr<detail::WriterImpl> impl_;
};

}  // namespace pubsub
