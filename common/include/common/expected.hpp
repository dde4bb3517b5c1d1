// The one error vocabulary of every module: an Error (a code from one list and a one-line
// message) and Expected<T, E>, a value or an error in the spirit of C++23 std::expected (which
// GCC 12 in C++20 mode lacks). No module throws across its interface; every fallible call
// returns an Expected, marked [[nodiscard]].
//
// The modules name it in their own namespaces - pubsub::Result<T>, storage::Result<T> and
// storage::Status (= Expected<void>), service::replay::Result<T> - so an error passes from one
// module to the next unchanged. Only the configuration uses another error type,
// Expected<T, config::ConfigErrors>, because it reports every problem of a file at once.
// Each program maps errors to its exit status in one place (recorder_main.cpp
// start_failure_status(), replay_main.cpp and service/replay.hpp's kExit* constants).
//
// Passing an error on with the caller's context keeps its code:
//   if (!rec) return rec.error().with_context(dir + ": cannot open the recording");
//   auto n = read_count(f).with_context("cannot read " + f);        // Expected, value untouched
//   auto size = open(f).and_then(read_header).transform(header_size); // first error passed on
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace common {

enum class Errc {
  kInvalidArgument,  // a bad option, name, size or id
  kNotFound,         // no such file, directory, interface, topic or entity
  kAlreadyExists,    // creating a recording in a directory that already holds one
  kUnsupported,      // an unknown format version or codec
  kTimeout,          // max_blocking_time or a wait expired
  kNetwork,          // a socket could not be created, bound or joined
  kResourceLimit,    // a sample larger than the history or the max sample size
  kFull,             // a bounded queue is full for now (try again; not a failure of the store)
  kClosed,           // the participant or the writer was closed
  kIo,               // a file or system call failed (the message carries strerror's text)
  kNoSpace,          // ENOSPC / EDQUOT / SQLITE_FULL / out of buffer memory
  kLowSpace,         // free space fell below a configured minimum (storage's disk guard):
                     // the recording was stopped on purpose, not by a failed write
  kIndex,            // SQLite reported an error
  kCorrupt,          // bytes that do not decode, a checksum mismatch, a bad magic
  kTruncated,        // input ends inside a structure
  kBusy,             // held by another process now (a recording being written): try later
};

// "invalid argument", "no space left", ...
const char* to_string(Errc code);

struct Error {
  Errc code = Errc::kInvalidArgument;
  std::string message;

  // "no space left: write segments/00000001.seg: No space left on device"
  std::string to_string() const;
  // The same code with "WHAT: " before the message: the caller's context.
  Error with_context(std::string_view what) const {
    std::string m(what);
    m += ": ";
    m += message;
    return Error{code, std::move(m)};
  }
};

inline Error make_error(Errc code, std::string message) {
  return Error{code, std::move(message)};
}

// A value or an error E.
template <class T, class E = Error>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(E error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const E& error() const { return std::get<1>(v_); }
  // This value, or `fallback` when there is an error (the caller has said what it means).
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }
  T value_or(T fallback) && { return ok() ? std::get<0>(std::move(v_)) : std::move(fallback); }

  // This value, or the error with the caller's context before its message (E = Error).
  Expected with_context(std::string_view what) && {
    if (ok()) return std::move(*this);
    return std::get<1>(v_).with_context(what);
  }
  // f(value), itself an Expected<U, E>; or this error, passed on.
  template <class F>
  auto and_then(F&& f) && -> std::invoke_result_t<F, T&&> {
    if (ok()) return std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
    return std::get<1>(std::move(v_));
  }
  // Expected<U, E> holding f(value) (U may be void); or this error, passed on.
  template <class F>
  auto transform(F&& f) && -> Expected<std::invoke_result_t<F, T&&>, E> {
    using U = std::invoke_result_t<F, T&&>;
    if (!ok()) return std::get<1>(std::move(v_));
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
      return {};
    } else {
      return std::invoke(std::forward<F>(f), std::get<0>(std::move(v_)));
    }
  }

 private:
  std::variant<T, E> v_;
};

// Success or an error E.
template <class E>
class [[nodiscard]] Expected<void, E> {
 public:
  Expected() = default;
  Expected(E error) : e_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return !e_.has_value(); }
  explicit operator bool() const { return ok(); }
  const E& error() const { return e_.value(); }  // throws std::bad_optional_access on success

  // Success, or the error with the caller's context before its message (E = Error).
  Expected with_context(std::string_view what) && {
    if (ok()) return {};
    return e_->with_context(what);
  }
  // f(), itself an Expected<U, E>; or this error, passed on.
  template <class F>
  auto and_then(F&& f) && -> std::invoke_result_t<F> {
    if (ok()) return std::invoke(std::forward<F>(f));
    return std::move(*e_);
  }

 private:
  std::optional<E> e_;
};

}  // namespace common
