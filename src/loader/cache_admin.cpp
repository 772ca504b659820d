// Cache administration (tropical/cache.hpp): listing, verifying, trimming and clearing the disk
// cache that the loader fills. Built on the cache store (cache/cache_store.hpp), which takes every
// step on the file system with the trust rules the library loads with: nothing here opens, names or
// parses a file. It sits with the loader, not in src/cache, because it names entries by their
// registry kernel and tells the current ones by the loader's key (loader/kernel_key.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include <tropical/cache.hpp>
#include <tropical/error.hpp>
#include "cache/cache_store.hpp"
#include "loader/kernel_key.hpp"
#include "util/warnings.hpp"

namespace tropical {
namespace fs = std::filesystem;

namespace {

void require_root(const CacheSettings& settings) {
    if (!settings.root.empty()) return;
    const std::string reason = cache_disabled_reason();
    throw InvalidArgument(
        fmt::format("no kernel cache folder: the settings name none{}",
                    reason.empty() ? " (set TROPICAL_GEMM_CACHE_DIR, XDG_CACHE_HOME or HOME)" : " (" + reason + ")"));
}

CacheEntryKind public_kind(detail::EntryKind kind) {
    switch (kind) {
    case detail::EntryKind::Ptx: return CacheEntryKind::Ptx;
    case detail::EntryKind::PtxForJit: return CacheEntryKind::PtxForJit;
    default: return CacheEntryKind::Cubin;
    }
}

std::chrono::system_clock::time_point mtime_of(const struct stat& info) {
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec))};
}

// The key this library looks a kernel up with, for the recorded NVRTC; memoised per (kernel, arch).
class CurrentKeys {
public:
    explicit CurrentKeys(std::optional<CacheListing::Compiler> compiler) : compiler_(std::move(compiler)) {}

    std::optional<bool> matches(const CacheEntry& entry, const detail::CacheKey& key) {
        if (!entry.info) return false;
        if (!compiler_) return std::nullopt;
        auto [it, inserted] = keys_.try_emplace({entry.info->index, entry.arch});
        if (inserted)
            it->second = detail::kernel_cache_key(*entry.info, entry.arch, {compiler_->major, compiler_->minor});
        return it->second == key;
    }

private:
    std::optional<CacheListing::Compiler> compiler_;
    std::map<std::pair<std::size_t, int>, detail::CacheKey> keys_;
};

// What the commands leave alone, said once per folder: never a guess at a disk problem.
void warn_refused(const std::vector<detail::Refusal>& refused) {
    for (const auto& r : refused)
        detail::warn_once("kernel cache refused " + r.path.string(),
                          fmt::format("{} {}: the library does not use what is there, and the cache commands leave it "
                                      "alone.{}",
                                      r.path.string(), r.problem, r.fix.empty() ? "" : " To fix it: " + r.fix + "."));
}

void warn_kept(const detail::StoredFile& file) {
    detail::warn_once("kernel cache kept " + file.path.string(),
                      fmt::format("{} was left in place: {}.", file.path.string(), file.kept_because));
}

struct Listed {
    CacheListing listing;
    detail::StoreScan scan;
    std::map<fs::path, const detail::StoredFile*> files;  // each listed entry's file, by path
};

Listed list(detail::CacheStore& store) {
    Listed out;
    out.scan = store.scan();
    warn_refused(out.scan.refused);
    CacheListing& listing = out.listing;
    listing.directory = out.scan.directory;
    if (const auto& record = out.scan.identity)
        listing.compiler = CacheListing::Compiler{record->major, record->minor, record->path};
    CurrentKeys current(listing.compiler);
    for (const auto& stored : out.scan.entries) {
        CacheEntry entry;
        entry.kernel = stored.entry.kernel;
        entry.info = find_kernel(stored.entry.kernel);
        entry.arch = stored.file.where;
        entry.kind = public_kind(stored.entry.kind);
        entry.key = stored.entry.key.hex();
        entry.path = stored.file.path;
        entry.bytes = S_ISREG(stored.file.info.st_mode) ? static_cast<std::uintmax_t>(stored.file.info.st_size) : 0;
        entry.last_used = mtime_of(stored.file.info);
        entry.valid = stored.valid;
        entry.problem = stored.problem;
        entry.current = current.matches(entry, stored.entry.key);
        listing.entry_bytes += entry.bytes;
        out.files[entry.path] = &stored.file;
        listing.entries.push_back(std::move(entry));
    }
    listing.temp_files = out.scan.temp_files.size();
    auto order = [](const CacheEntry& e) {
        return std::tuple(e.arch, e.info ? e.info->index : kernel_registry().size(), e.kernel, e.kind, e.key);
    };
    std::sort(listing.entries.begin(), listing.entries.end(),
              [&](const CacheEntry& a, const CacheEntry& b) { return order(a) < order(b); });
    return out;
}

// Removes one file, counting it; a file already gone or replaced (another process at work) is no
// failure, and what the trust rules keep is said, not removed.
bool remove_counted(detail::CacheStore& store, const detail::StoredFile& file, std::uintmax_t bytes,
                    RemovedFiles& removed) {
    if (!file.removable) {
        warn_kept(file);
        return false;
    }
    const int error = store.remove(file);
    if (error == 0) {
        ++removed.files;
        removed.bytes += bytes;
        return true;
    }
    if (error == ENOENT || error == ESTALE) return false;
    if (error == ENOTEMPTY || error == EEXIST) {
        detail::StoredFile kept = file;
        kept.kept_because = fmt::format(
            "it is a folder with files in it, where the cache keeps a file; remove it "
            "yourself (rm -r {}) if they are not needed",
            file.path.string());
        warn_kept(kept);
        return false;
    }
    throw CacheNotWritable(fmt::format("cannot remove {}: {}", file.path.string(), std::strerror(error)));
}

std::uintmax_t size_of(const detail::StoredFile& file) {
    return S_ISREG(file.info.st_mode) ? static_cast<std::uintmax_t>(file.info.st_size) : 0;
}

// Temp files whose writer died (it holds no lock on them any more); one in flight stays, since
// removing it would fail that writer's rename.
void remove_abandoned(detail::CacheStore& store, const detail::StoreScan& scan, RemovedFiles& removed,
                      bool count_bytes) {
    for (const auto& temp : scan.temp_files)
        if (store.remove_if_abandoned(temp)) {
            ++removed.files;
            if (count_bytes) removed.bytes += size_of(temp);
        }
}

}  // namespace

std::string_view to_string(CacheEntryKind kind) noexcept {
    switch (kind) {
    case CacheEntryKind::Cubin: return "cubin";
    case CacheEntryKind::Ptx: return "ptx";
    case CacheEntryKind::PtxForJit: return "jit.ptx";
    }
    return "?";
}

CacheListing list_cache(const CacheSettings& settings) {
    require_root(settings);
    detail::CacheStore store(settings.root, detail::CacheStore::Access::Administer);
    return list(store).listing;
}

RemovedFiles clear_cache(const CacheSettings& settings) {
    require_root(settings);
    detail::CacheStore store(settings.root, detail::CacheStore::Access::Administer);
    Listed found = list(store);
    RemovedFiles removed;
    // CUBINs first: lookups read them, so an entry becomes a miss before its PTX twin goes.
    std::stable_partition(found.listing.entries.begin(), found.listing.entries.end(),
                          [](const CacheEntry& e) { return e.kind != CacheEntryKind::Ptx; });
    for (auto& entry : found.listing.entries)
        if (remove_counted(store, *found.files.at(entry.path), entry.bytes, removed))
            removed.entries.push_back(std::move(entry));
    remove_abandoned(store, found.scan, removed, true);
    if (const auto& record = found.scan.identity_file) remove_counted(store, *record, size_of(*record), removed);
    // Links and special files in place of the format or an architecture folder: nothing of anyone's
    // is lost with them, and the folder can be made again. The rest was said by warn_refused.
    for (const auto& thing : found.scan.in_the_way)
        if (thing.removable) remove_counted(store, thing, 0, removed);
    store.remove_empty_folders(found.scan.arch_folders, true);
    return removed;
}

RemovedFiles trim_cache(const CacheSettings& settings, std::uintmax_t max_bytes) {
    require_root(settings);
    detail::CacheStore store(settings.root, detail::CacheStore::Access::Administer);
    Listed found = list(store);
    RemovedFiles removed;
    // They never become entries; `bytes` counts entries only, as the listing's entry_bytes does.
    remove_abandoned(store, found.scan, removed, false);
    std::uintmax_t total = found.listing.entry_bytes;
    if (total <= max_bytes) return removed;

    // A CUBIN, its PTX twin (same kernel, architecture and key) go together, as one unit.
    struct Unit {
        std::vector<CacheEntry*> files;
        std::uintmax_t bytes = 0;
        bool valid = true;
        bool removable = true;
        std::chrono::system_clock::time_point last_used{};
    };
    std::map<std::tuple<int, std::string, std::string>, Unit> units;
    for (auto& entry : found.listing.entries) {
        auto& unit = units[{entry.arch, entry.kernel, entry.key}];
        unit.files.push_back(&entry);
        unit.bytes += entry.bytes;
        unit.valid = unit.valid && entry.valid;
        unit.removable = unit.removable && found.files.at(entry.path)->removable;
        unit.last_used = std::max(unit.last_used, entry.last_used);
    }
    std::vector<Unit*> order;
    for (auto& [id, unit] : units) order.push_back(&unit);
    // Entries that fail to verify are useless, whenever they were used; then the oldest first.
    std::stable_sort(order.begin(), order.end(), [](const Unit* a, const Unit* b) {
        return std::tuple(a->valid, a->last_used) < std::tuple(b->valid, b->last_used);
    });
    for (Unit* unit : order) {
        if (total <= max_bytes) break;
        if (!unit->removable) {  // said, and left: the library never loads it anyway
            for (const CacheEntry* entry : unit->files) warn_kept(*found.files.at(entry->path));
            continue;
        }
        std::stable_partition(unit->files.begin(), unit->files.end(),
                              [](const CacheEntry* e) { return e->kind != CacheEntryKind::Ptx; });
        for (CacheEntry* entry : unit->files)
            if (remove_counted(store, *found.files.at(entry->path), entry->bytes, removed))
                removed.entries.push_back(*entry);
        total -= unit->bytes;
    }
    store.remove_empty_folders(found.scan.arch_folders, false);
    return removed;
}

}  // namespace tropical
