// Names of the error codes (common/expected.hpp).
#include "common/expected.hpp"

namespace common {

const char* to_string(Errc code) {
  switch (code) {
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kNotFound:
      return "not found";
    case Errc::kAlreadyExists:
      return "already exists";
    case Errc::kUnsupported:
      return "unsupported";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kNetwork:
      return "network error";
    case Errc::kResourceLimit:
      return "resource limit";
    case Errc::kFull:
      return "queue full";
    case Errc::kClosed:
      return "closed";
    case Errc::kIo:
      return "I/O error";
    case Errc::kNoSpace:
      return "no space left";
    case Errc::kLowSpace:
      return "low disk space";
    case Errc::kIndex:
      return "index error";
    case Errc::kCorrupt:
      return "corrupt data";
    case Errc::kTruncated:
      return "truncated data";
    case Errc::kBusy:
      return "busy";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  return std::string(common::to_string(code)) + ": " + message;
}

}  // namespace common
