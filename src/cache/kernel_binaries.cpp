#include "cache/kernel_binaries.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "nvrtc/compile_options.hpp"
#include "nvrtc/nvrtc_library.hpp"
#include "catalogue/kernel_source.hpp"
#include <tropical/error.hpp>

namespace tropical::detail {
namespace {

// The compiler-identity record (IdentityRecord), kept beside the entries.
constexpr const char* kIdentityFile = "nvrtc-identity";
constexpr CacheKey kIdentityKey{0, kCacheFormatVersion};

FileStamp stamp_of(const std::string& path) {
    struct stat info {};
    if (path.empty() || ::stat(path.c_str(), &info) != 0) return {};
    return {static_cast<long long>(info.st_size),
            static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec};
}

std::string entry_name(const KernelInfo& kernel, int arch, const CacheKey& key, std::string_view suffix) {
    return fmt::format("{}/{}-{}{}", KernelBinaries::arch_folder(arch), kernel.name, key.hex(), suffix);
}

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
    return binary;
}

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

CompilerSource nvrtc_compiler_source() {
    const char* path = std::getenv(kNvrtcPathVariable);
    return {make_nvrtc_compiler, path ? path : ""};
}

KernelBinaries::KernelBinaries(CacheSettings settings, CompilerSource compiler)
    : compiler_source_(std::move(compiler)) {
    if (settings.enabled) disk_.emplace(cache_format_directory(settings.root));
}

KernelBinaries& KernelBinaries::process_default() {
    static KernelBinaries instance(cache_settings_from_environment(), nvrtc_compiler_source());
    return instance;
}

std::string KernelBinaries::arch_folder(int arch) { return fmt::format("sm_{}", arch); }

const char* KernelBinaries::identity_file_name() { return kIdentityFile; }

std::optional<KernelBinaries::RecordedCompiler> KernelBinaries::recorded_compiler(
    const std::filesystem::path& format_directory) {
    std::ifstream in(format_directory / kIdentityFile, std::ios::binary);
    const std::vector<char> raw{std::istreambuf_iterator<char>(in), {}};
    const EntryKind kind = EntryKind::Identity;
    const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(raw.data()), raw.size()};
    const auto entry = decode_entry(bytes, &kIdentityKey, &kind);
    if (entry.check != EntryCheck::Valid) return std::nullopt;
    const auto record = parse_identity({reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size()});
    if (!record) return std::nullopt;
    return RecordedCompiler{record->major, record->minor, record->path};
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
    const std::string unit = kernel_source(kernel);
    const auto options = compile_options(arch, false);
    auto key_for = [&](Version v) { return cache_key({unit, &options, v.major, v.minor, arch}); };

    if (disk_) {
        if (const auto version = version_for_lookup()) {
            const CacheKey key = key_for(*version);
            for (auto [suffix, kind] : {std::pair{".cubin", EntryKind::Cubin}, std::pair{".jit.ptx", EntryKind::PtxForJit}}) {
                const auto name = entry_name(kernel, arch, key, suffix);
                const auto bytes = disk_->read(name);
                if (!bytes) continue;
                const auto entry = decode_entry(*bytes, &key, &kind);
                if (entry.check != EntryCheck::Valid) continue;  // recompiled below and overwritten
                disk_->touch(name);
                std::lock_guard lock(mutex_);
                ++stats_.disk_hits;
                return binary_of(entry.payload, kind, true);
            }
        }
    }

    const Compiler& c = compiler();
    const auto& archs = c.supported_archs();
    const bool known = std::binary_search(archs.begin(), archs.end(), arch);
    if (!known && (archs.empty() || arch < archs.front()))
        throw Unsupported(fmt::format("NVRTC {}.{} ({}) cannot compile for sm_{}: it supports sm_{} to sm_{}", c.major_version(),
                                      c.minor_version(), c.library_path(), arch, archs.empty() ? 0 : archs.front(),
                                      archs.empty() ? 0 : archs.back()));
    // A device newer than this NVRTC: PTX for the newest architecture it knows, finished by the driver.
    const CompiledKernel compiled =
        known ? c.compile(kernel.name, unit, options) : c.compile(kernel.name, unit, compile_options(archs.back(), true));
    {
        std::lock_guard lock(mutex_);
        ++stats_.compiles;
    }
    if (known && compiled.cubin.empty())
        throw Error(Status::Internal, fmt::format("NVRTC produced no CUBIN for kernel {} on sm_{}", kernel.name, arch));

    if (disk_) {
        const CacheKey key = key_for({c.major_version(), c.minor_version()});
        if (known) {
            // PTX first: the CUBIN is what lookups read, so it appears last, when its twin is there.
            disk_->publish(entry_name(kernel, arch, key, ".ptx"), encode_entry(EntryKind::Ptx, key, as_bytes(compiled.ptx)));
            disk_->publish(entry_name(kernel, arch, key, ".cubin"), encode_entry(EntryKind::Cubin, key, compiled.cubin));
        } else {
            disk_->publish(entry_name(kernel, arch, key, ".jit.ptx"),
                           encode_entry(EntryKind::PtxForJit, key, as_bytes(compiled.ptx)));
        }
    }
    return known ? binary_of(compiled.cubin, EntryKind::Cubin, false)
                 : binary_of(as_bytes(compiled.ptx), EntryKind::PtxForJit, false);
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

std::optional<KernelBinaries::Version> KernelBinaries::version_for_lookup() {
    {
        std::lock_guard lock(compiler_mutex_);
        if (compiler_) return Version{compiler_->major_version(), compiler_->minor_version()};
    }
    const auto bytes = disk_->read(kIdentityFile);
    const EntryKind kind = EntryKind::Identity;
    const auto entry = bytes ? decode_entry(*bytes, &kIdentityKey, &kind) : DecodedEntry{};
    std::optional<IdentityRecord> record;
    if (entry.check == EntryCheck::Valid)
        record = parse_identity({reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size()});
    if (record) {
        const bool same_choice = compiler_source_.override_path.empty() || compiler_source_.override_path == record->path;
        if (same_choice && (record->path.empty() || stamp_of(record->path) == record->stamp))
            return Version{record->major, record->minor};
    }
    try {
        const Compiler& c = compiler();
        return Version{c.major_version(), c.minor_version()};
    } catch (const NoCompiler&) {
        // A warmed cache shipped without the toolkit: its entries are still good.
        if (record) return Version{record->major, record->minor};
        throw;
    }
}

void KernelBinaries::record_identity(const Compiler& c) {
    if (!disk_) return;
    const IdentityRecord record{c.major_version(), c.minor_version(), stamp_of(c.library_path()), c.library_path()};
    const std::string text = serialise_identity(record);
    if (const auto bytes = disk_->read(kIdentityFile)) {
        const EntryKind kind = EntryKind::Identity;
        const auto entry = decode_entry(*bytes, &kIdentityKey, &kind);
        if (entry.check == EntryCheck::Valid &&
            std::string_view(reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size()) == text)
            return;
    }
    disk_->publish(kIdentityFile, encode_entry(EntryKind::Identity, kIdentityKey, as_bytes(text)));
}

}  // namespace tropical::detail
