// Warming the kernel cache ahead of time (tropical/cache.hpp): what tropical-gemm-warmup and the
// Python package's warm_up do, through the same loader the library uses when it runs.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include <tropical/cache.hpp>
#include <tropical/error.hpp>
#include "driver/cuda_driver.hpp"
#include "loader/kernel_binaries.hpp"
#include "nvrtc/nvrtc_library.hpp"

namespace tropical {
namespace fs = std::filesystem;
using detail::KernelBinaries;

namespace {

// --- one KernelBinaries per cache root, shared by every thread of a warm-up ---------------------

struct WarmTable {
    std::uint64_t removals = 0;  // detail::cache_removals() when it was made
    std::shared_ptr<KernelBinaries> binaries;
};

struct WarmTables {
    std::mutex mutex;
    std::map<fs::path, WarmTable> by_root;
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
    auto& table = tables.by_root[normalised(settings.root)];
    // After a clear or a trim in this process, the table of what is in memory no longer describes
    // the disk: a kernel removed there must be compiled and stored again, not reported as cached.
    const std::uint64_t removals = detail::cache_removals();
    if (!table.binaries || table.removals != removals)
        table = {removals, std::make_shared<KernelBinaries>(settings, detail::nvrtc_compiler_source())};
    return table.binaries;
}

[[noreturn]] void throw_not_stored(const fs::path& directory, const detail::StoreWrite& why) {
    // A refused folder is named with the reason it is refused: it is no disk or quota problem.
    if (why.refused)
        throw CacheNotWritable(fmt::format("the kernel cache folder {} is not used: {}. To fix it: {}.",
                                           directory.string(), why.problem, why.fix));
    throw CacheNotWritable(
        fmt::format("cannot write kernels to the cache folder {}: {}. Choose a writable folder "
                    "(TROPICAL_GEMM_CACHE_DIR).",
                    directory.string(), why.problem));
}

bool from_registry(const KernelInfo& kernel) {
    const auto all = kernel_registry();
    return kernel.index < all.size() && all[kernel.index].name == kernel.name;
}

// The library looks up only a kernel's CUBIN, so a warm-up that found it would leave a broken or
// missing PTX twin as it is. Where the CUBIN of the key the cache's recorded NVRTC gives is valid
// and its twin is not, the CUBIN is removed (if NVRTC can make it again), so that the lookup that
// follows compiles both again.
void drop_cubin_without_twin(detail::CacheStore& store, const KernelInfo& kernel, int arch) {
    const auto recorded = store.read_identity();
    if (!recorded) return;  // nothing was compiled into this cache yet
    const detail::CacheKey key = detail::kernel_cache_key(kernel, arch, {recorded->major, recorded->minor});
    const auto file = [&](detail::EntryKind kind) { return detail::entry_file_name(kernel.name, key, kind); };
    const detail::EntryState cubin = store.inspect_entry(arch, file(detail::EntryKind::Cubin));
    if (!cubin.valid || store.inspect_entry(arch, file(detail::EntryKind::Ptx)).valid) return;
    try {
        (void)detail::nvrtc();
    } catch (const NoCompiler&) {
        return;  // the CUBIN still serves; without NVRTC it could not be made again
    }
    store.remove({arch, file(detail::EntryKind::Cubin), {}, cubin.info, true, ""});
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

WarmTargets warm_targets(const std::vector<int>& requested, bool every_known) {
    auto unique = [](std::vector<int> archs) {
        std::sort(archs.begin(), archs.end());
        archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
        return archs;
    };
    if (requested.empty() && !every_known) {
        std::vector<int> local;
        try {
            local = device_architectures();
        } catch (const NoDriver& e) {
            throw NoDriver(
                fmt::format("there is no CUDA GPU here to warm the cache for, so name the architectures to "
                            "compile for (such as sm_80 and sm_90). Why no GPU: {}",
                            e.what()));
        }
        if (local.empty())
            throw NoDevice(
                "this machine has no CUDA GPU to warm the cache for: name the architectures to compile for "
                "(such as sm_80 and sm_90)");
        return {unique(local), {}};
    }
    for (int arch : requested)
        if (arch < 10 || arch > 9999)
            throw InvalidArgument(fmt::format("{} is not an architecture: sm_XY is written XY, as in 80 or 90", arch));
    std::vector<int> known;
    try {
        known = supported_architectures();
    } catch (const NoCompiler& e) {
        if (every_known)
            throw NoCompiler(fmt::format("every architecture NVRTC knows needs NVRTC to know them: {}", e.what()));
        return {unique(requested), "NVRTC could not be loaded, so the architectures were not checked"};
    }
    if (every_known) return {known, {}};
    for (int arch : requested)
        if (!std::binary_search(known.begin(), known.end(), arch)) {
            std::string names;
            for (int k : known) names += fmt::format("{}sm_{}", names.empty() ? "" : ", ", k);
            throw Unsupported(fmt::format("NVRTC cannot compile for sm_{}: it knows {}", arch, names));
        }
    return {unique(requested), {}};
}

WarmResult warm_kernel(const CacheSettings& settings, const KernelInfo& kernel, int arch) {
    const auto start = std::chrono::steady_clock::now();
    if (!settings.enabled) {
        const std::string reason = cache_disabled_reason();
        throw InvalidArgument(fmt::format("cannot warm the kernel cache: these settings disable it{}",
                                          reason.empty() ? "" : " (the environment says: " + reason + ")"));
    }
    if (settings.root.empty())
        throw InvalidArgument(
            "no kernel cache folder: the settings name none (set TROPICAL_GEMM_CACHE_DIR, "
            "XDG_CACHE_HOME or HOME)");
    if (arch <= 0) throw InvalidArgument(fmt::format("cannot warm kernels for sm_{}: not an architecture", arch));
    if (!from_registry(kernel))
        throw InvalidArgument(
            fmt::format("warm_kernel takes a kernel of kernel_registry(); {} is not one", kernel.name));

    const auto binaries = binaries_for(settings);
    detail::CacheStore& store = *binaries->store();
    const fs::path directory = cache_format_directory(settings.root);
    // The folder could not be made, or is refused: every lookup would miss and nothing be kept.
    if (!store.usable()) throw_not_stored(directory, store.problem());

    drop_cubin_without_twin(store, kernel, arch);
    const auto binary = binaries->get(kernel, arch);
    WarmResult result;
    result.compiled = !binary->from_disk;
    result.ptx_for_jit = binary->kind == detail::EntryKind::PtxForJit;
    if (result.compiled && !binary->stored) throw_not_stored(directory, binary->not_stored);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace tropical
