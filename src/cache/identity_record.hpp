#pragma once
// The compiler-identity record kept in the format folder (v1/nvrtc-identity): which NVRTC produced
// the entries, and how to recognise its library file again (size and modification time) without
// loading it, so that a warm start needs no NVRTC to compute its keys. Stored as an entry
// (entry_format.hpp) of kind Identity whose payload is the text
// "<major> <minor> <size> <mtime ns>\n<library path>".
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_key.hpp"

namespace tropical::detail {

struct FileStamp {
    long long size = -1;
    long long mtime_ns = -1;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

struct IdentityRecord {
    int major = 0, minor = 0;
    FileStamp stamp;
    std::string path;
};

// The record is larger than this only if something else wrote it: a path is at most 4 KiB.
inline constexpr std::size_t kMaxIdentityBytes = 8 * 1024;

std::string serialise_identity(const IdentityRecord& record);
std::optional<IdentityRecord> parse_identity(std::string_view text);  // nothing if malformed

// The record as the bytes of its file, and back (nothing unless the header, key and checksum verify).
std::vector<std::byte> encode_identity(const IdentityRecord& record);
std::optional<IdentityRecord> decode_identity(std::span<const std::byte> bytes);

// The size and modification time of the file at `path`; the default stamp where there is none.
FileStamp stamp_of(const std::string& path);

}  // namespace tropical::detail
