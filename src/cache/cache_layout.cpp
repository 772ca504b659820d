#include "cache/cache_layout.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>

#include <fmt/format.h>

namespace tropical::detail {
namespace {

constexpr std::string_view kTempMarker = ".tmp-";

// The suffixes of entry files, longest first: ".jit.ptx" also ends in ".ptx".
constexpr std::pair<std::string_view, EntryKind> kSuffixes[] = {
    {".jit.ptx", EntryKind::PtxForJit},
    {".cubin", EntryKind::Cubin},
    {".ptx", EntryKind::Ptx},
};

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string format_folder_name() { return fmt::format("v{}", kCacheFormatVersion); }

std::string arch_folder_name(int arch) { return fmt::format("sm_{}", arch); }

int arch_of_folder_name(std::string_view name) {
    if (!name.starts_with("sm_") || name.size() < 5 || name.size() > 7) return 0;
    int arch = 0;
    for (char c : name.substr(3)) {
        if (c < '0' || c > '9') return 0;
        arch = arch * 10 + (c - '0');
    }
    return arch;
}

std::string_view entry_suffix(EntryKind kind) {
    for (auto [suffix, k] : kSuffixes)
        if (k == kind) return suffix;
    return {};
}

std::string entry_file_name(std::string_view kernel, const CacheKey& key, EntryKind kind) {
    return fmt::format("{}-{}{}", kernel, key.hex(), entry_suffix(kind));
}

std::optional<CacheKey> parse_key(std::string_view hex) {
    if (hex.size() != 32) return std::nullopt;
    CacheKey key;
    for (std::size_t i = 0; i < 32; ++i) {
        const char c = hex[i];
        std::uint64_t digit = 0;
        if (c >= '0' && c <= '9') digit = static_cast<std::uint64_t>(c - '0');
        else if (c >= 'a' && c <= 'f') digit = static_cast<std::uint64_t>(c - 'a' + 10);
        else return std::nullopt;
        auto& half = i < 16 ? key.high : key.low;
        half = (half << 4) | digit;
    }
    return key;
}

std::optional<EntryName> parse_entry_file_name(std::string_view file) {
    for (auto [suffix, kind] : kSuffixes) {
        if (!file.ends_with(suffix)) continue;
        const auto stem = file.substr(0, file.size() - suffix.size());
        const auto dash = stem.rfind('-');
        if (dash == std::string_view::npos || dash == 0) return std::nullopt;
        const auto name = stem.substr(0, dash);
        if (!std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
        const auto key = parse_key(stem.substr(dash + 1));
        if (!key) return std::nullopt;
        return EntryName{std::string(name), *key, kind};
    }
    return std::nullopt;
}

std::optional<EntryLocation> locate_entry(const std::filesystem::path& path) {
    const auto folder = path.parent_path(), format = folder.parent_path();
    const int arch = arch_of_folder_name(folder.filename().string());
    std::string file = path.filename().string();
    if (arch == 0 || format.filename() != format_folder_name() || !parse_entry_file_name(file)) return std::nullopt;
    return EntryLocation{format.has_parent_path() ? format.parent_path() : ".", arch, std::move(file)};
}

std::string temp_file_name(std::string_view final_name) {
    static const std::uint64_t seed =
        std::random_device{}() * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(::getpid());
    static std::atomic<std::uint64_t> counter{0};
    return fmt::format("{}{}{}-{:x}", final_name, kTempMarker, ::getpid(), seed + counter.fetch_add(1));
}

bool is_temp_file_name(std::string_view file) {
    const auto at = file.find(kTempMarker);
    if (at == std::string_view::npos) return false;
    const auto base = file.substr(0, at);
    return base == kIdentityFileName || parse_entry_file_name(base).has_value();
}

}  // namespace tropical::detail
