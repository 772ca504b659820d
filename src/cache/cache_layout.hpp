#pragma once
// The names of the kernel cache on disk, written down here and nowhere else:
//
//   <root>/                                   the cache root (cache_settings_from_environment)
//     v1/                                     the format folder (kCacheFormatVersion)
//       nvrtc-identity                        which NVRTC filled it (identity_record.hpp)
//       sm_90/                                one folder per architecture
//         <kernel>-<32 hex key>.cubin         what a warm start loads
//         <kernel>-<32 hex key>.ptx           its PTX twin, the portable copy
//         <kernel>-<32 hex key>.jit.ptx       PTX alone, for a device newer than NVRTC
//         <any of these>.tmp-<pid>-<hex>      a write in flight, or left by a killed writer
//
// Anything else in these folders is not the library's and is left alone.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"

namespace tropical::detail {

inline constexpr std::string_view kIdentityFileName = "nvrtc-identity";

std::string format_folder_name();           // "v1"
std::string arch_folder_name(int arch);     // "sm_90"
int arch_of_folder_name(std::string_view);  // "sm_90" -> 90; 0 for any other name

// ".cubin", ".ptx", ".jit.ptx" for the three kinds of entry; empty for the record.
std::string_view entry_suffix(EntryKind kind);

// What an entry's file name says: the kernel, the key and the kind.
struct EntryName {
    std::string kernel;
    CacheKey key;
    EntryKind kind = EntryKind::Cubin;
};

std::string entry_file_name(std::string_view kernel, const CacheKey& key, EntryKind kind);
std::optional<EntryName> parse_entry_file_name(std::string_view file);  // nothing for any other name
std::optional<CacheKey> parse_key(std::string_view hex);                // 32 lowercase hex digits

// Where an entry's path (<root>/v1/sm_XY/<entry file name>) puts it; nothing for any other path.
struct EntryLocation {
    std::filesystem::path root;  // "." for a path that starts at v1/
    int arch = 0;
    std::string file;
};
std::optional<EntryLocation> locate_entry(const std::filesystem::path& path);

// A fresh temp-file name for a write of `final_name`, in the same folder: unique to this call.
std::string temp_file_name(std::string_view final_name);
// Whether `file` is a writer's temp file: an entry's (or the record's) name, ".tmp-", a suffix.
bool is_temp_file_name(std::string_view file);

}  // namespace tropical::detail
