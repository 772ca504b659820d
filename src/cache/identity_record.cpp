#include "cache/identity_record.hpp"

#include <sys/stat.h>

#include <sstream>

#include <fmt/format.h>

#include "cache/entry_format.hpp"

namespace tropical::detail {
namespace {

// The record's key is fixed: one record per format folder.
constexpr CacheKey kIdentityKey{0, kCacheFormatVersion};

}  // namespace

std::string serialise_identity(const IdentityRecord& r) {
    return fmt::format("{} {} {} {}\n{}", r.major, r.minor, r.stamp.size, r.stamp.mtime_ns, r.path);
}

std::optional<IdentityRecord> parse_identity(std::string_view text) {
    IdentityRecord r;
    std::istringstream in{std::string(text)};
    if (!(in >> r.major >> r.minor >> r.stamp.size >> r.stamp.mtime_ns)) return std::nullopt;
    in.ignore(1);
    std::getline(in, r.path);
    return r;
}

std::vector<std::byte> encode_identity(const IdentityRecord& record) {
    const std::string text = serialise_identity(record);
    return encode_entry(EntryKind::Identity, kIdentityKey,
                        {reinterpret_cast<const std::byte*>(text.data()), text.size()});
}

std::optional<IdentityRecord> decode_identity(std::span<const std::byte> bytes) {
    const EntryKind kind = EntryKind::Identity;
    const auto entry = decode_entry(bytes, &kIdentityKey, &kind);
    if (entry.check != EntryCheck::Valid) return std::nullopt;
    return parse_identity({reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size()});
}

FileStamp stamp_of(const std::string& path) {
    struct stat info {};
    if (path.empty() || ::stat(path.c_str(), &info) != 0) return {};
    return {static_cast<long long>(info.st_size),
            static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec};
}

}  // namespace tropical::detail
