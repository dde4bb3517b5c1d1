// Status and Result<T>: the error currency of the storage library. No exceptions are thrown by
// the library; every fallible call returns one of these, marked [[nodiscard]].
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace storage {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad id, record too large, bad option
  kNotFound,         // file, directory, topic, ...
  kAlreadyExists,    // creating a recording in a directory that already holds one
  kIo,               // a system call failed (message carries strerror text)
  kNoSpace,          // ENOSPC / EDQUOT / SQLITE_FULL: "No space left on device"
  kCorrupt,          // checksum mismatch, bad magic, undecodable bytes
  kTruncated,        // input ends inside a structure
  kFull,             // try_append: every chunk buffer is in flight (not an error of the store)
  kClosed,           // the writer was closed
  kIndex,            // SQLite reported an error
  kUnsupported,      // unknown format version or codec
};

const char* to_string(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "kNoSpace: write segments/00000001.seg: No space left on device"
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.is_ok()); }  // NOLINT

  bool is_ok() const { return value_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace storage
