#pragma once
// Compiled kernels, by (kernel, architecture): from memory, else from the disk cache, else from the
// compiler, which is loaded only then. Thread-safe; each (kernel, architecture) is produced once
// per process however many threads ask for it at the same time.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/disk_cache.hpp"
#include "cache/entry_format.hpp"
#include "nvrtc/compiler.hpp"
#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>

namespace tropical::detail {

struct KernelBinary {
    std::vector<std::byte> image;  // what cuModuleLoadData takes: a CUBIN, or NUL-terminated PTX
    EntryKind kind = EntryKind::Cubin;  // Cubin, or PtxForJit for a device newer than the compiler
    bool from_disk = false;
};

// The payload of the compiler-identity record: which NVRTC produced the entries, and how to
// recognise its library file again (size and modification time) without loading it. As text:
// "<major> <minor> <size> <mtime ns>\n<library path>".
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
std::string serialise_identity(const IdentityRecord& record);
std::optional<IdentityRecord> parse_identity(std::string_view text);  // nothing if malformed

struct CompilerSource {
    std::function<std::unique_ptr<Compiler>()> load;  // may throw NoCompiler
    std::string override_path;                        // the compiler the user named explicitly, if any
};

// NVRTC, honouring $TROPICAL_GEMM_NVRTC.
CompilerSource nvrtc_compiler_source();

class KernelBinaries {
public:
    KernelBinaries(CacheSettings settings, CompilerSource compiler);

    // The binary of `kernel` for sm_<arch>. Throws NoCompiler or CompileError on a miss that cannot
    // be compiled.
    std::shared_ptr<const KernelBinary> get(const KernelInfo& kernel, int arch);

    // Where the entries of sm_<arch> live, relative to the format folder ("sm_90").
    static std::string arch_folder(int arch);

    struct Stats {
        int compiler_loads = 0;
        int compiles = 0;
        int disk_hits = 0;
    };
    Stats stats() const;
    bool disk_enabled() const { return disk_.has_value(); }
    // Whether what is compiled now reaches the disk (false: disabled, or the folder is not usable).
    bool disk_writable() const { return disk_ && disk_->writable(); }

    // The compiler-identity record kept in a format folder: its file name, and what it says if it
    // verifies. For the cache administration (tropical/cache.hpp).
    struct RecordedCompiler {
        int major = 0, minor = 0;
        std::string library_path;
    };
    static const char* identity_file_name();
    static std::optional<RecordedCompiler> recorded_compiler(const std::filesystem::path& format_directory);

    // The instance every CudaContext uses, configured from the environment.
    static KernelBinaries& process_default();

private:
    struct Slot {
        std::mutex mutex;
        std::shared_ptr<const KernelBinary> binary;
    };
    struct Version {
        int major = 0, minor = 0;
    };

    std::shared_ptr<const KernelBinary> produce(const KernelInfo& kernel, int arch);
    const Compiler& compiler();
    std::optional<Version> version_for_lookup();
    void record_identity(const Compiler& compiler);

    CompilerSource compiler_source_;
    std::optional<DiskCache> disk_;

    mutable std::mutex mutex_;  // guards slots_, compiler_, stats_
    std::map<std::pair<std::size_t, int>, std::shared_ptr<Slot>> slots_;
    std::unique_ptr<Compiler> compiler_;
    std::mutex compiler_mutex_;  // held while loading the compiler
    Stats stats_;
};

}  // namespace tropical::detail
