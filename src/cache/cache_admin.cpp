// Cache administration (tropical/cache.hpp): warming, listing, verifying, trimming and clearing the
// disk cache that KernelBinaries fills. Everything here reads the same names and headers the
// library writes; nothing here knows a shortcut the library does not take.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "cache/entry_format.hpp"
#include "cache/file_trust.hpp"
#include "cache/kernel_binaries.hpp"
#include "context/scoped_context.hpp"
#include "driver/cuda_driver.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/nvrtc_library.hpp"
#include "catalogue/kernel_source.hpp"
#include <tropical/cache.hpp>
#include <tropical/context.hpp>
#include <tropical/error.hpp>

namespace tropical {
namespace fs = std::filesystem;
using detail::KernelBinaries;

namespace {

// --- one KernelBinaries per cache root, shared by every thread of a warm-up ---------------------

struct WarmTables {
    std::mutex mutex;
    std::map<fs::path, std::shared_ptr<KernelBinaries>> by_root;
};

WarmTables& warm_tables() {
    static WarmTables tables;
    return tables;
}

fs::path normalised(const fs::path& root) {
    std::error_code ignored;
    const fs::path absolute = fs::absolute(root, ignored);
    return (absolute.empty() ? root : absolute).lexically_normal();
}

std::shared_ptr<KernelBinaries> binaries_for(const CacheSettings& settings) {
    // The cache the library itself uses: share its instance, so that a kernel warmed here is not
    // compiled a second time when this process later launches it.
    const CacheSettings defaults = cache_settings_from_environment();
    if (settings.enabled && defaults.enabled && normalised(defaults.root) == normalised(settings.root))
        return {std::shared_ptr<KernelBinaries>{}, &KernelBinaries::process_default()};
    auto& tables = warm_tables();
    std::lock_guard lock(tables.mutex);
    auto& slot = tables.by_root[normalised(settings.root)];
    if (!slot) slot = std::make_shared<KernelBinaries>(settings, detail::nvrtc_compiler_source());
    return slot;
}

// After a clear or a trim, the in-memory table of that root no longer describes the disk.
void forget_root(const CacheSettings& settings) {
    auto& tables = warm_tables();
    std::lock_guard lock(tables.mutex);
    tables.by_root.erase(normalised(settings.root));
}

// Why nothing can be written under `directory`, in words, without creating anything.
std::string why_unwritable(const fs::path& directory) {
    fs::path existing = directory;
    std::error_code ec;
    while (!existing.empty() && !fs::exists(existing, ec) && existing.has_parent_path() &&
           existing != existing.parent_path())
        existing = existing.parent_path();
    if (!fs::is_directory(existing, ec)) return fmt::format("{} is not a folder", existing.string());
    if (::access(existing.c_str(), W_OK | X_OK) != 0)
        return fmt::format("{}: {}", existing.string(), std::strerror(errno));
    return "a write failed there (is the disk full, or the quota exceeded?)";
}

[[noreturn]] void throw_unwritable(const fs::path& directory) {
    throw CacheNotWritable(fmt::format("cannot write kernels to the cache folder {}: {}. Choose a writable folder "
                                       "(TROPICAL_GEMM_CACHE_DIR).",
                                       directory.string(), why_unwritable(directory)));
}

void require_root(const CacheSettings& settings) {
    if (settings.root.empty())
        throw InvalidArgument("no kernel cache folder: the settings name none (set TROPICAL_GEMM_CACHE_DIR, "
                              "XDG_CACHE_HOME or HOME)");
}

bool from_registry(const KernelInfo& kernel) {
    const auto all = kernel_registry();
    return kernel.index < all.size() && all[kernel.index].name == kernel.name;
}

// --- entries on disk ----------------------------------------------------------------------------

// The suffixes of entry files, longest first: ".jit.ptx" also ends in ".ptx".
constexpr std::pair<std::string_view, CacheEntryKind> kSuffixes[] = {
    {".jit.ptx", CacheEntryKind::PtxForJit},
    {".cubin", CacheEntryKind::Cubin},
    {".ptx", CacheEntryKind::Ptx},
};

constexpr std::string_view kTempMarker = ".tmp-";

detail::EntryKind detail_kind(CacheEntryKind kind) {
    switch (kind) {
    case CacheEntryKind::Cubin: return detail::EntryKind::Cubin;
    case CacheEntryKind::Ptx: return detail::EntryKind::Ptx;
    case CacheEntryKind::PtxForJit: return detail::EntryKind::PtxForJit;
    }
    return detail::EntryKind::Cubin;
}

// "sm_90" -> 90; 0 for any other name.
int arch_of_folder(std::string_view name) {
    if (!name.starts_with("sm_") || name.size() < 5 || name.size() > 7) return 0;
    int arch = 0;
    for (char c : name.substr(3)) {
        if (c < '0' || c > '9') return 0;
        arch = arch * 10 + (c - '0');
    }
    return arch;
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::optional<detail::CacheKey> parse_key(std::string_view hex) {
    if (hex.size() != 32) return std::nullopt;
    detail::CacheKey key;
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

struct ParsedName {
    std::string kernel;
    detail::CacheKey key;
    std::string key_hex;
    CacheEntryKind kind{};
};

// "<kernel>-<32 hex><suffix>", as KernelBinaries names its entries; nothing else.
std::optional<ParsedName> parse_entry_name(std::string_view file) {
    for (auto [suffix, kind] : kSuffixes) {
        if (!file.ends_with(suffix)) continue;
        const auto stem = file.substr(0, file.size() - suffix.size());
        const auto dash = stem.rfind('-');
        if (dash == std::string_view::npos || dash == 0) return std::nullopt;
        const auto name = stem.substr(0, dash);
        if (!std::all_of(name.begin(), name.end(), is_name_char)) return std::nullopt;
        const auto key = parse_key(stem.substr(dash + 1));
        if (!key) return std::nullopt;
        return ParsedName{std::string(name), *key, std::string(stem.substr(dash + 1)), kind};
    }
    return std::nullopt;
}

// A writer's temp file: an entry's (or the record's) name, ".tmp-", then the writer's suffix.
bool is_temp_name(std::string_view file) {
    const auto at = file.find(kTempMarker);
    if (at == std::string_view::npos) return false;
    const auto base = file.substr(0, at);
    return base == KernelBinaries::identity_file_name() || parse_entry_name(base).has_value();
}

std::chrono::system_clock::time_point mtime_of(const struct stat& info) {
    return std::chrono::system_clock::time_point{std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec))};
}

// The whole file; nothing if it cannot be opened (another process may have just removed it).
std::optional<std::vector<std::byte>> read_file(const fs::path& path) {
    std::vector<std::byte> bytes;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) bytes = detail::read_all(fd, static_cast<std::size_t>(info.st_size));
    ::close(fd);
    return bytes;
}

// The key this library looks a kernel up with, for an NVRTC version; memoised per (kernel, arch).
class CurrentKeys {
public:
    explicit CurrentKeys(std::optional<CacheListing::Compiler> compiler) : compiler_(std::move(compiler)) {}

    std::optional<bool> matches(const CacheEntry& entry, const detail::CacheKey& key) {
        if (!entry.info) return false;
        if (!compiler_) return std::nullopt;
        auto [it, inserted] = keys_.try_emplace({entry.info->index, entry.arch});
        if (inserted) {
            const auto unit = detail::kernel_source(*entry.info);
            const auto options = detail::compile_options(entry.arch, false);
            it->second = detail::cache_key({unit, &options, compiler_->major, compiler_->minor, entry.arch});
        }
        return it->second == key;
    }

private:
    std::optional<CacheListing::Compiler> compiler_;
    std::map<std::pair<std::size_t, int>, detail::CacheKey> keys_;
};

// Why the library would not load the entry at `file` in `folder` (file_trust.hpp), if it would not.
std::optional<std::string> untrusted(const fs::path& folder, const fs::path& file, const struct stat& info) {
    const auto format_folder = folder.parent_path();
    for (const auto& dir : {format_folder.parent_path(), format_folder, folder})
        if (const auto d = detail::distrust(dir)) return fmt::format("not trusted: {} {}", dir.string(), d->problem);
    if (const auto d = detail::distrust(info, file)) return fmt::format("not trusted: it {}", d->problem);
    return std::nullopt;
}

struct Scan {
    CacheListing listing;
    std::vector<fs::path> temp_files;
    std::vector<fs::path> arch_folders;
    std::optional<fs::path> identity;
};

Scan scan(const CacheSettings& settings) {
    require_root(settings);
    Scan out;
    auto& listing = out.listing;
    listing.directory = cache_format_directory(settings.root);
    if (const auto recorded = KernelBinaries::recorded_compiler(listing.directory))
        listing.compiler = CacheListing::Compiler{recorded->major, recorded->minor, recorded->library_path};
    CurrentKeys current(listing.compiler);

    std::error_code ec;
    if (!fs::is_directory(listing.directory, ec)) return out;
    for (const auto& top : fs::directory_iterator(listing.directory, ec)) {
        const std::string top_name = top.path().filename().string();
        if (top_name == KernelBinaries::identity_file_name()) {
            out.identity = top.path();
            continue;
        }
        if (is_temp_name(top_name)) {
            out.temp_files.push_back(top.path());
            continue;
        }
        const int arch = arch_of_folder(top_name);
        if (arch == 0 || !top.is_directory(ec)) continue;
        out.arch_folders.push_back(top.path());
        std::error_code inner;
        for (const auto& file : fs::directory_iterator(top.path(), inner)) {
            const std::string name = file.path().filename().string();
            if (is_temp_name(name)) {
                out.temp_files.push_back(file.path());
                continue;
            }
            const auto parsed = parse_entry_name(name);
            struct stat info {};
            if (!parsed || ::lstat(file.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
            CacheEntry entry;
            entry.kernel = parsed->kernel;
            entry.info = find_kernel(parsed->kernel);
            entry.arch = arch;
            entry.kind = parsed->kind;
            entry.key = parsed->key_hex;
            entry.path = file.path();
            entry.bytes = static_cast<std::uintmax_t>(info.st_size);
            entry.last_used = mtime_of(info);
            const auto bytes = read_file(file.path());
            if (!bytes) continue;  // removed since the folder was read: a clear in another process
            const auto expected_kind = detail_kind(parsed->kind);
            const auto decoded = detail::decode_entry(*bytes, &parsed->key, &expected_kind);
            entry.valid = decoded.check == detail::EntryCheck::Valid;
            if (!entry.valid) entry.problem = std::string(detail::to_string(decoded.check));
            // The library refuses what another user could have written; so does the listing.
            if (const auto why = untrusted(top.path(), file.path(), info)) {
                entry.valid = false;
                entry.problem = *why;
            }
            entry.current = current.matches(entry, parsed->key);
            listing.entry_bytes += entry.bytes;
            listing.entries.push_back(std::move(entry));
        }
    }
    listing.temp_files = out.temp_files.size();
    auto order = [](const CacheEntry& e) {
        return std::tuple(e.arch, e.info ? e.info->index : kernel_registry().size(), e.kernel, e.kind, e.key);
    };
    std::sort(listing.entries.begin(), listing.entries.end(),
              [&](const CacheEntry& a, const CacheEntry& b) { return order(a) < order(b); });
    return out;
}

// Removes one file, counting it; a file already gone (another process cleared it) is no failure.
void remove_counted(const fs::path& path, std::uintmax_t bytes, RemovedFiles& removed) {
    if (::unlink(path.c_str()) == 0) {
        ++removed.files;
        removed.bytes += bytes;
    } else if (errno != ENOENT) {
        throw CacheNotWritable(fmt::format("cannot remove {}: {}", path.string(), std::strerror(errno)));
    }
}

std::uintmax_t size_of_file(const fs::path& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0 ? static_cast<std::uintmax_t>(info.st_size) : 0;
}

// The library looks up only a kernel's CUBIN, so a warm-up that found it would leave a broken or
// missing PTX twin as it is. Where the CUBIN of the key the cache's recorded NVRTC gives is valid
// and its twin is not, the CUBIN is removed (if NVRTC can make it again), so that the lookup that
// follows compiles both again.
void drop_cubin_without_twin(const fs::path& directory, const KernelInfo& kernel, int arch) {
    const auto recorded = KernelBinaries::recorded_compiler(directory);
    if (!recorded) return;  // nothing was compiled into this cache yet
    const auto unit = detail::kernel_source(kernel);
    const auto options = detail::compile_options(arch, false);
    const detail::CacheKey key = detail::cache_key({unit, &options, recorded->major, recorded->minor, arch});
    const fs::path stem = directory / KernelBinaries::arch_folder(arch) / fmt::format("{}-{}", kernel.name, key.hex());
    auto valid = [&](const fs::path& path, detail::EntryKind kind) {
        const auto bytes = read_file(path);
        return bytes && detail::decode_entry(*bytes, &key, &kind).check == detail::EntryCheck::Valid;
    };
    const fs::path cubin = stem.string() + ".cubin";
    if (!valid(cubin, detail::EntryKind::Cubin) || valid(stem.string() + ".ptx", detail::EntryKind::Ptx)) return;
    try {
        (void)detail::nvrtc();
    } catch (const NoCompiler&) {
        return;  // the CUBIN still serves; without NVRTC it could not be made again
    }
    ::unlink(cubin.c_str());
}

}  // namespace

std::vector<int> supported_architectures() { return detail::nvrtc().supported_archs; }

std::vector<int> device_architectures() {
    int count = 0;
    TROPICAL_CU(cuDeviceGetCount(&count));
    std::vector<int> archs;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CUdevice device = 0;
        TROPICAL_CU(cuDeviceGet(&device, ordinal));
        int major = 0, minor = 0;
        TROPICAL_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
        TROPICAL_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
        archs.push_back(major * 10 + minor);
    }
    return archs;
}

WarmResult warm_kernel(const CacheSettings& settings, const KernelInfo& kernel, int arch) {
    const auto start = std::chrono::steady_clock::now();
    if (!settings.enabled)
        throw InvalidArgument("cannot warm the kernel cache: it is disabled (TROPICAL_GEMM_CACHE=off, or no folder)");
    require_root(settings);
    if (arch <= 0) throw InvalidArgument(fmt::format("cannot warm kernels for sm_{}: not an architecture", arch));
    if (!from_registry(kernel))
        throw InvalidArgument(
            fmt::format("warm_kernel takes a kernel of kernel_registry(); {} is not one", kernel.name));

    const auto binaries = binaries_for(settings);
    const fs::path directory = cache_format_directory(settings.root);
    // The folder could not even be created: every lookup would miss and nothing could be kept.
    std::error_code ec;
    if (!binaries->disk_writable() && !fs::is_directory(directory, ec)) throw_unwritable(directory);

    drop_cubin_without_twin(directory, kernel, arch);
    const auto binary = binaries->get(kernel, arch);
    WarmResult result;
    result.compiled = !binary->from_disk;
    result.ptx_for_jit = binary->kind == detail::EntryKind::PtxForJit;
    if (result.compiled && !binaries->disk_writable()) throw_unwritable(directory);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

std::string_view to_string(CacheEntryKind kind) noexcept {
    switch (kind) {
    case CacheEntryKind::Cubin: return "cubin";
    case CacheEntryKind::Ptx: return "ptx";
    case CacheEntryKind::PtxForJit: return "jit.ptx";
    }
    return "?";
}

CacheListing list_cache(const CacheSettings& settings) { return scan(settings).listing; }

bool load_cache_entry(const CacheEntry& entry, int device_ordinal) {
    struct stat info {};
    if (::stat(entry.path.c_str(), &info) == 0)
        if (const auto why = untrusted(entry.path.parent_path(), entry.path, info))
            throw InvalidArgument(fmt::format("{} is not safe to load: {}", entry.path.string(), *why));
    const auto read = read_file(entry.path);
    if (!read) return false;  // removed since it was listed (a clear or a trim in another process)
    const auto& bytes = *read;
    const auto key = parse_key(entry.key);
    const auto kind = detail_kind(entry.kind);
    const auto decoded = key ? detail::decode_entry(bytes, &*key, &kind) : detail::DecodedEntry{};
    if (decoded.check != detail::EntryCheck::Valid)
        throw InvalidArgument(fmt::format("{} is not a valid cache entry: {}", entry.path.string(),
                                          key ? detail::to_string(decoded.check) : "its name holds no key"));
    std::vector<std::byte> image(decoded.payload.begin(), decoded.payload.end());
    if (entry.kind != CacheEntryKind::Cubin) image.push_back(std::byte{0});  // PTX is read as a C string

    CudaContext& context = CudaContext::for_device(device_ordinal);
    detail::ScopedContext current(context.primary_context());
    CUmodule module = nullptr;
    TROPICAL_CU(cuModuleLoadData(&module, image.data()));
    CUfunction function = nullptr;
    const CUresult found = detail::driver().cuModuleGetFunction(&function, module, entry.kernel.c_str());
    (void)detail::driver().cuModuleUnload(module);
    if (found != CUDA_SUCCESS) detail::throw_cuda_error(found, "cuModuleGetFunction", __FILE__, __LINE__);
    return true;
}

RemovedFiles clear_cache(const CacheSettings& settings) {
    Scan found = scan(settings);
    RemovedFiles removed;
    // CUBINs first: lookups read them, so an entry becomes a miss before its PTX twin goes.
    std::stable_partition(found.listing.entries.begin(), found.listing.entries.end(),
                          [](const CacheEntry& e) { return e.kind != CacheEntryKind::Ptx; });
    for (auto& entry : found.listing.entries) {
        remove_counted(entry.path, entry.bytes, removed);
        removed.entries.push_back(std::move(entry));
    }
    // A temp file is a write in flight for the moment it takes (milliseconds); removing it would fail
    // that writer's rename and send that process to a memory-only cache. Only leftovers go.
    const auto leftover_before = std::chrono::system_clock::now() - std::chrono::minutes(1);
    for (const auto& temp : found.temp_files) {
        struct stat info {};
        if (::lstat(temp.c_str(), &info) == 0 && mtime_of(info) < leftover_before)
            remove_counted(temp, static_cast<std::uintmax_t>(info.st_size), removed);
    }
    if (found.identity) remove_counted(*found.identity, size_of_file(*found.identity), removed);
    // Folders left empty; rmdir leaves alone any that hold something else.
    for (const auto& folder : found.arch_folders) ::rmdir(folder.c_str());
    ::rmdir(found.listing.directory.c_str());
    forget_root(settings);
    return removed;
}

RemovedFiles trim_cache(const CacheSettings& settings, std::uintmax_t max_bytes) {
    Scan found = scan(settings);
    RemovedFiles removed;
    std::uintmax_t total = found.listing.entry_bytes;
    if (total <= max_bytes) return removed;

    // A CUBIN, its PTX twin (same kernel, architecture and key) go together, as one unit.
    struct Unit {
        std::vector<CacheEntry*> files;
        std::uintmax_t bytes = 0;
        bool valid = true;
        std::chrono::system_clock::time_point last_used{};
    };
    std::map<std::tuple<int, std::string, std::string>, Unit> units;
    for (auto& entry : found.listing.entries) {
        auto& unit = units[{entry.arch, entry.kernel, entry.key}];
        unit.files.push_back(&entry);
        unit.bytes += entry.bytes;
        unit.valid = unit.valid && entry.valid;
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
        std::stable_partition(unit->files.begin(), unit->files.end(),
                              [](const CacheEntry* e) { return e->kind != CacheEntryKind::Ptx; });
        for (CacheEntry* entry : unit->files) {
            remove_counted(entry->path, entry->bytes, removed);
            removed.entries.push_back(*entry);
        }
        total -= unit->bytes;
    }
    for (const auto& folder : found.arch_folders) ::rmdir(folder.c_str());
    forget_root(settings);
    return removed;
}

}  // namespace tropical
