// common/md5.hpp: Boost's MD5, its digest turned into the 16 bytes in order.
#include "common/md5.hpp"

#include <boost/uuid/detail/md5.hpp>

namespace common {

std::array<uint8_t, 16> md5(std::span<const uint8_t> bytes) {
  boost::uuids::detail::md5 h;
  h.process_bytes(bytes.data(), bytes.size());
  boost::uuids::detail::md5::digest_type digest;
  h.get_digest(digest);
  // Boost 1.71+ stores each 4 digest bytes as one unsigned int, the first byte its most
  // significant (on any host: its generators swap them back).
  std::array<uint8_t, 16> out{};
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(digest[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

}  // namespace common
