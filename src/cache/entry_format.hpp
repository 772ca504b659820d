#pragma once
// The bytes of one cache file: a fixed header, then the payload. Anything that does not verify is
// a miss: it is recompiled and overwritten, never handed to the driver.
//
//   offset  size  field
//        0     8  magic "TRGEMM\x01\n"
//        8     4  format version (kCacheFormatVersion), little-endian
//       12     4  payload kind (EntryKind)
//       16     8  payload length in bytes
//       24     8  XXH3-64 of the payload
//       32    16  cache key (high, low), so that a renamed file cannot pass for another
//       48     -  payload
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "cache/cache_key.hpp"

namespace tropical::detail {

enum class EntryKind : std::uint32_t {
    Cubin = 1,      // machine code for exactly the key's architecture
    Ptx = 2,        // the PTX NVRTC produced with that CUBIN: the portable copy
    PtxForJit = 3,  // PTX alone, for a device newer than the NVRTC that compiled it
    Identity = 4,   // the compiler-identity record
};

inline constexpr std::size_t kEntryHeaderSize = 48;

enum class EntryCheck {
    Valid,
    TooShort,
    BadMagic,
    WrongFormatVersion,
    WrongKind,
    WrongKey,
    WrongLength,
    BadChecksum,
};

std::string_view to_string(EntryCheck check);

std::vector<std::byte> encode_entry(EntryKind kind, const CacheKey& key, std::span<const std::byte> payload);

struct DecodedEntry {
    EntryCheck check = EntryCheck::TooShort;
    EntryKind kind{};
    CacheKey key;
    std::span<const std::byte> payload;  // a view into the bytes given to decode_entry
};

// Verifies the header and checksum. With `expected_key`/`expected_kind`, a mismatch is reported.
DecodedEntry decode_entry(std::span<const std::byte> bytes, const CacheKey* expected_key = nullptr,
                          const EntryKind* expected_kind = nullptr);

}  // namespace tropical::detail
