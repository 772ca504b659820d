#include "cache/entry_format.hpp"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tropical::detail {
namespace {

constexpr char kMagic[8] = {'T', 'R', 'G', 'E', 'M', 'M', '\x01', '\n'};

template <class T>
void put(std::byte* at, T value) {
    // Written byte by byte in little-endian order, whatever the host's order.
    for (std::size_t i = 0; i < sizeof(T); ++i)
        at[i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
}

template <class T>
T get(const std::byte* at) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<std::uint64_t>(at[i]) << (8 * i);
    return static_cast<T>(value);
}

DecodedEntry rejected(DecodedEntry entry, EntryCheck why) {
    entry.check = why;
    entry.payload = {};
    return entry;
}

}  // namespace

std::string_view to_string(EntryCheck check) {
    switch (check) {
    case EntryCheck::Valid: return "valid";
    case EntryCheck::TooShort: return "shorter than its header";
    case EntryCheck::BadMagic: return "not a tropical-gemm cache entry (bad magic)";
    case EntryCheck::WrongFormatVersion: return "written by another cache-format version";
    case EntryCheck::WrongKind: return "holds another kind of payload";
    case EntryCheck::WrongKey: return "holds the entry of another key";
    case EntryCheck::WrongLength: return "truncated or padded (length does not match its header)";
    case EntryCheck::BadChecksum: return "corrupted (checksum mismatch)";
    }
    return "?";
}

std::vector<std::byte> encode_entry(EntryKind kind, const CacheKey& key, std::span<const std::byte> payload) {
    std::vector<std::byte> bytes(kEntryHeaderSize + payload.size());
    std::memcpy(bytes.data(), kMagic, sizeof kMagic);
    put<std::uint32_t>(bytes.data() + 8, kCacheFormatVersion);
    put<std::uint32_t>(bytes.data() + 12, static_cast<std::uint32_t>(kind));
    put<std::uint64_t>(bytes.data() + 16, payload.size());
    put<std::uint64_t>(bytes.data() + 24, XXH3_64bits(payload.data(), payload.size()));
    put<std::uint64_t>(bytes.data() + 32, key.high);
    put<std::uint64_t>(bytes.data() + 40, key.low);
    if (!payload.empty()) std::memcpy(bytes.data() + kEntryHeaderSize, payload.data(), payload.size());
    return bytes;
}

DecodedEntry decode_entry(std::span<const std::byte> bytes, const CacheKey* expected_key,
                          const EntryKind* expected_kind) {
    DecodedEntry out;
    if (bytes.size() < kEntryHeaderSize) return out;
    const std::byte* h = bytes.data();
    if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return rejected(out, EntryCheck::BadMagic);
    if (get<std::uint32_t>(h + 8) != kCacheFormatVersion) return rejected(out, EntryCheck::WrongFormatVersion);
    out.kind = static_cast<EntryKind>(get<std::uint32_t>(h + 12));
    out.key = {get<std::uint64_t>(h + 32), get<std::uint64_t>(h + 40)};
    if (expected_kind && out.kind != *expected_kind) return rejected(out, EntryCheck::WrongKind);
    if (expected_key && !(out.key == *expected_key)) return rejected(out, EntryCheck::WrongKey);
    const std::uint64_t length = get<std::uint64_t>(h + 16);
    if (length != bytes.size() - kEntryHeaderSize) return rejected(out, EntryCheck::WrongLength);
    const auto payload = bytes.subspan(kEntryHeaderSize);
    if (get<std::uint64_t>(h + 24) != XXH3_64bits(payload.data(), payload.size()))
        return rejected(out, EntryCheck::BadChecksum);
    out.payload = payload;
    out.check = EntryCheck::Valid;
    return out;
}

}  // namespace tropical::detail
