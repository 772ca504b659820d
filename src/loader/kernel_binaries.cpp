#include "loader/kernel_binaries.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include <tropical/error.hpp>
#include "cache/cache_settings.hpp"
#include "cache/identity_record.hpp"
#include "nvrtc/compile_options.hpp"
#include "nvrtc/nvrtc_library.hpp"
#include "util/warnings.hpp"

namespace tropical::detail {
namespace {

std::span<const std::byte> as_bytes(std::string_view text) {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

std::shared_ptr<KernelBinary> binary_of(std::span<const std::byte> payload, EntryKind kind, bool from_disk) {
    auto binary = std::make_shared<KernelBinary>();
    binary->image.assign(payload.begin(), payload.end());
    // cuModuleLoadData reads PTX as a C string.
    if (kind != EntryKind::Cubin) binary->image.push_back(std::byte{0});
    binary->kind = kind;
    binary->from_disk = from_disk;
    binary->stored = from_disk;
    return binary;
}

}  // namespace

CompilerSource nvrtc_compiler_source() {
    const char* path = std::getenv(kNvrtcPathVariable);
    return {make_nvrtc_compiler, path ? path : ""};
}

KernelBinaries::KernelBinaries(CacheSettings settings, CompilerSource compiler)
    : compiler_source_(std::move(compiler)) {
    if (settings.enabled) store_.emplace(settings.root, CacheStore::Access::Use);
}

KernelBinaries& KernelBinaries::process_default() {
    static KernelBinaries instance = [] {
        const ResolvedCacheSettings resolved = resolve_cache_settings();
        if (resolved.warn)
            warn_once("kernel cache settings", fmt::format("the kernel cache on disk is off: {}. Kernels compiled by "
                                                           "this process are kept in memory only.",
                                                           resolved.disabled_reason));
        return KernelBinaries(resolved.settings, nvrtc_compiler_source());
    }();
    return instance;
}

KernelBinaries::Stats KernelBinaries::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

std::shared_ptr<const KernelBinary> KernelBinaries::get(const KernelInfo& kernel, int arch) {
    std::shared_ptr<Slot> slot;
    {
        std::lock_guard lock(mutex_);
        auto& entry = slots_[{kernel.index, arch}];
        if (!entry) entry = std::make_shared<Slot>();
        slot = entry;
    }
    // Other threads asking for the same kernel wait here while the first one produces it.
    std::lock_guard lock(slot->mutex);
    if (!slot->binary) slot->binary = produce(kernel, arch);
    return slot->binary;
}

std::shared_ptr<const KernelBinary> KernelBinaries::produce(const KernelInfo& kernel, int arch) {
    if (store_ && store_->usable()) {
        if (const auto version = version_for_lookup()) {
            const CacheKey key = kernel_cache_key(kernel, arch, *version);
            for (EntryKind kind : {EntryKind::Cubin, EntryKind::PtxForJit}) {
                // Anything but a verified entry is a miss: compiled below and published over it.
                const auto payload = store_->read_entry(arch, {std::string(kernel.name), key, kind});
                if (!payload) continue;
                std::lock_guard lock(mutex_);
                ++stats_.disk_hits;
                return binary_of(*payload, kind, true);
            }
        }
    }

    const Compiler& c = compiler();
    const auto& archs = c.supported_archs();
    const bool known = std::binary_search(archs.begin(), archs.end(), arch);
    if (!known && (archs.empty() || arch < archs.front()))
        throw Unsupported(fmt::format("NVRTC {}.{} ({}) cannot compile for sm_{}: it supports sm_{} to sm_{}",
                                      c.major_version(), c.minor_version(), c.library_path(), arch,
                                      archs.empty() ? 0 : archs.front(), archs.empty() ? 0 : archs.back()));
    // The inputs the key is computed from; a device newer than this NVRTC gets PTX for the newest
    // architecture it knows, finished by the driver.
    const CompileInputs inputs = compile_inputs(kernel, arch);
    const CompiledKernel compiled = known ? c.compile(kernel.name, inputs.source, inputs.options)
                                          : c.compile(kernel.name, inputs.source, compile_options(archs.back(), true));
    {
        std::lock_guard lock(mutex_);
        ++stats_.compiles;
    }
    if (known && compiled.cubin.empty())
        throw Error(Status::Internal, fmt::format("NVRTC produced no CUBIN for kernel {} on sm_{}", kernel.name, arch));

    auto binary = known ? binary_of(compiled.cubin, EntryKind::Cubin, false)
                        : binary_of(as_bytes(compiled.ptx), EntryKind::PtxForJit, false);
    if (store_) {
        const CacheKey key = kernel_cache_key(kernel, arch, {c.major_version(), c.minor_version()});
        const std::string name(kernel.name);
        StoreWrite written;
        if (known) {
            // PTX first: the CUBIN is what lookups read, so it appears last, when its twin is there.
            written = store_->write_entry(arch, {name, key, EntryKind::Ptx}, as_bytes(compiled.ptx));
            if (written.written) written = store_->write_entry(arch, {name, key, EntryKind::Cubin}, compiled.cubin);
        } else {
            written = store_->write_entry(arch, {name, key, EntryKind::PtxForJit}, as_bytes(compiled.ptx));
        }
        binary->stored = written.written;
        if (!written.written) binary->not_stored = std::move(written);
    }
    return binary;
}

const Compiler& KernelBinaries::compiler() {
    std::lock_guard lock(compiler_mutex_);
    if (!compiler_) {
        compiler_ = compiler_source_.load();
        {
            std::lock_guard stats_lock(mutex_);
            ++stats_.compiler_loads;
        }
        record_identity(*compiler_);
    }
    return *compiler_;
}

std::optional<CompilerVersion> KernelBinaries::version_for_lookup() {
    {
        std::lock_guard lock(compiler_mutex_);
        if (compiler_) return CompilerVersion{compiler_->major_version(), compiler_->minor_version()};
    }
    const std::optional<IdentityRecord> record = store_->read_identity();
    if (record) {
        const bool same_choice =
            compiler_source_.override_path.empty() || compiler_source_.override_path == record->path;
        if (same_choice && (record->path.empty() || stamp_of(record->path) == record->stamp))
            return CompilerVersion{record->major, record->minor};
    }
    try {
        const Compiler& c = compiler();
        return CompilerVersion{c.major_version(), c.minor_version()};
    } catch (const NoCompiler&) {
        // A warmed cache shipped without the toolkit: its entries are still good.
        if (record) return CompilerVersion{record->major, record->minor};
        throw;
    }
}

void KernelBinaries::record_identity(const Compiler& c) {
    if (!store_) return;
    const IdentityRecord record{c.major_version(), c.minor_version(), stamp_of(c.library_path()), c.library_path()};
    if (const auto recorded = store_->read_identity())
        if (serialise_identity(*recorded) == serialise_identity(record)) return;
    store_->write_identity(record);
}

}  // namespace tropical::detail
