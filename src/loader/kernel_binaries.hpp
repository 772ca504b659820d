#pragma once
// Compiled kernels, by (kernel, architecture): from memory, else from the disk cache (the store of
// src/cache, the only reader and writer of its files), else from the compiler, which is loaded only
// then. Thread-safe; each (kernel, architecture) is produced once per process however many threads
// ask for it at the same time.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>
#include "cache/cache_store.hpp"
#include "cache/entry_format.hpp"
#include "loader/kernel_key.hpp"
#include "nvrtc/compiler.hpp"

namespace tropical::detail {

struct KernelBinary {
    std::vector<std::byte> image;       // what cuModuleLoadData takes: a CUBIN, or NUL-terminated PTX
    EntryKind kind = EntryKind::Cubin;  // Cubin, or PtxForJit for a device newer than the compiler
    bool from_disk = false;
    // Compiled here: whether it reached the disk cache, and if not, why (what was refused or failed).
    bool stored = false;
    StoreWrite not_stored;
};

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

    struct Stats {
        int compiler_loads = 0;
        int compiles = 0;
        int disk_hits = 0;
    };
    Stats stats() const;
    bool disk_enabled() const { return store_.has_value(); }
    // Whether what is compiled now reaches the disk (false: disabled, or the folder is not usable).
    bool disk_writable() const { return store_ && store_->writable(); }
    // The disk cache; nullptr where it is disabled.
    CacheStore* store() { return store_ ? &*store_ : nullptr; }

    // The instance every CudaContext uses, configured from the environment.
    static KernelBinaries& process_default();

private:
    struct Slot {
        std::mutex mutex;
        std::shared_ptr<const KernelBinary> binary;
    };

    std::shared_ptr<const KernelBinary> produce(const KernelInfo& kernel, int arch);
    const Compiler& compiler();
    std::optional<CompilerVersion> version_for_lookup();
    void record_identity(const Compiler& compiler);

    CompilerSource compiler_source_;
    std::optional<CacheStore> store_;

    mutable std::mutex mutex_;  // guards slots_, compiler_, stats_
    std::map<std::pair<std::size_t, int>, std::shared_ptr<Slot>> slots_;
    std::unique_ptr<Compiler> compiler_;
    std::mutex compiler_mutex_;  // held while loading the compiler
    Stats stats_;
};

}  // namespace tropical::detail
