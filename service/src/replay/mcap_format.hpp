// MCAP's magic and record opcodes (https://mcap.dev/spec, major version 0), shared by
// McapWriter and McapReader. Private to service/src/replay.
#pragma once

#include <array>
#include <cstdint>

namespace service::replay::detail::mcap {

inline constexpr std::array<uint8_t, 8> kMagic = {0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

enum Op : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

}  // namespace service::replay::detail::mcap
