// Where an export writes (export.cpp, export_mcap.cpp). Private to service/src/replay.
//
// A regular file (new, or existing: it is replaced) is written through a temporary in the same
// directory, ".NAME.partial-PID", renamed onto NAME by commit() only when the export succeeded;
// abandon() (and the destructor) removes it, so a failed or interrupted export leaves no file
// (an existing NAME as it was). A symbolic link is followed (the temporary goes next to its
// target). Standard output, devices and FIFOs are written directly: that cannot be atomic.
// One export at a time per process: the temporary is registered for
// abandon_export_from_signal_handler() (service/replay.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "common.hpp"

namespace service::replay::detail {

class OutputFile {
 public:
  // path empty: `out` (standard output). Errors: "cannot write PATH: reason" (nothing created).
  static Result<std::unique_ptr<OutputFile>> open(const std::string& path, std::ostream& out);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return *stream_; }
  // "out.jsonl" or "standard output".
  const std::string& name() const { return name_; }
  bool is_stdout() const { return path_.empty(); }
  // Written through a temporary that commit() renames.
  bool atomic() const { return !temp_.empty(); }
  // Bytes the stream accepted so far.
  uint64_t bytes() const;
  // Flushes; for a temporary also fsyncs, closes and renames it onto the output. Error: the
  // reason ("No space left on device"), the temporary removed.
  Result<void> commit();
  // Removes the temporary (idempotent; nothing for direct output).
  void abandon();
  // What became of the output after a failure, for the end of the message: "no output file
  // written", "NAME left as it was" or "the output on standard output is incomplete" (direct
  // output: "NAME is incomplete").
  std::string outcome() const;

 private:
  OutputFile() = default;
  class Buf;
  std::string path_;    // as given; empty: standard output
  std::string target_;  // what commit() renames onto (the symlink's target)
  std::string temp_;    // the temporary; empty: direct output
  std::string name_;
  bool existed_ = false;
  int fd_ = -1;
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> own_stream_;
  std::ostream* stream_ = nullptr;
  std::ostream* out_ = nullptr;
  uint64_t out_start_ = 0;
  mutable uint64_t out_bytes_ = 0;
};

}  // namespace service::replay::detail
