#pragma once
// Where compiled kernels are kept between processes, and how to turn that off.
//
// The cache root is $TROPICAL_GEMM_CACHE_DIR, else $XDG_CACHE_HOME/tropical-gemm, else
// ~/.cache/tropical-gemm (a TROPICAL_GEMM_CACHE_DIR set but empty disables the disk cache rather
// than meaning the default); entries live in a format-version folder inside it (v1/), one folder per
// architecture (v1/sm_90/). TROPICAL_GEMM_CACHE=off (or 0, false, no) disables the disk cache:
// kernels are then compiled once per process and kept in memory.
//
// The second half of this header administers a cache (what tropical-gemm-warmup does): fill it
// ahead of time, for this machine's GPUs or for architectures it does not have, list it, verify
// it, bound its size and clear it.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tropical/error.hpp>
#include <tropical/export.hpp>
#include <tropical/kernels.hpp>

namespace tropical {

struct CacheSettings {
    bool enabled = true;
    std::filesystem::path root;  // the cache root; the format-version folder is created inside
};

// The settings the library uses when nothing else is said, read from the environment.
TROPICAL_GEMM_EXPORT CacheSettings cache_settings_from_environment();

// Why cache_settings_from_environment() leaves the disk cache off, in words that name the variable
// ("TROPICAL_GEMM_CACHE=off", "TROPICAL_GEMM_CACHE_DIR is set but empty; ..."); empty where it does not.
TROPICAL_GEMM_EXPORT std::string cache_disabled_reason();

// The folder inside `root` that holds entries of this library's cache format (root/v1).
TROPICAL_GEMM_EXPORT std::filesystem::path cache_format_directory(const std::filesystem::path& root);

// --- Administration ------------------------------------------------------------------------------

// Kernels had to be written to the cache folder and could not be (read-only, full, not a folder,
// another user's). The library itself never throws this: it falls back to memory with a warning.
class TROPICAL_GEMM_EXPORT CacheNotWritable : public Error {
public:
    explicit CacheNotWritable(const std::string& message) : Error(Status::InvalidArgument, message) {}
};

// The architectures (XY of sm_XY, ascending) that the NVRTC this process compiles with can target.
// Loads NVRTC (honouring $TROPICAL_GEMM_NVRTC); throws NoCompiler where it cannot be loaded.
TROPICAL_GEMM_EXPORT std::vector<int> supported_architectures();

// The architecture of each CUDA device of this machine, by ordinal, read without creating a
// context. Throws NoDriver without a usable driver; empty where the driver sees no device.
TROPICAL_GEMM_EXPORT std::vector<int> device_architectures();

// The architectures a warm-up compiles for (XY of sm_XY, ascending, each once): `requested`, or
// where it is empty this machine's GPUs' (every architecture NVRTC knows with `every_known`). One
// rule for the warm-up tool and the Python package. A requested architecture that NVRTC cannot
// compile for is refused (Unsupported, naming those it can); where NVRTC cannot be loaded the
// request goes unchecked (a warm cache needs no NVRTC) and `note` says so. Throws NoDriver or
// NoDevice, saying to name the architectures, where none is requested and this machine has no
// usable GPU; InvalidArgument for a value that is no architecture; NoCompiler for every_known
// without NVRTC.
struct WarmTargets {
    std::vector<int> archs;
    std::string note;
};
TROPICAL_GEMM_EXPORT WarmTargets warm_targets(const std::vector<int>& requested, bool every_known = false);

struct WarmResult {
    bool compiled = false;     // compiled by this call; false: a valid entry was already in the cache
    bool ptx_for_jit = false;  // stored as PTX that the driver finishes: NVRTC does not know the architecture
    double seconds = 0;        // wall time of the call
};

// Puts `kernel` (an element of kernel_registry()) for sm_<arch> into the disk cache of `settings`,
// exactly as a process running on such a device would find it, and compiles it only if the cache
// has no valid entry. NVRTC is loaded only when something must be compiled, so warming an already
// warm cache works without it. Thread-safe: all calls for one cache root share one in-process
// table, so that a kernel asked for by several threads at once is compiled once.
// Throws InvalidArgument (settings that disable the cache, an arch <= 0, a kernel not from the
// registry), CacheNotWritable, NoCompiler, CompileError, or Unsupported (an architecture older
// than NVRTC supports). An architecture newer than NVRTC knows is stored as PTX (ptx_for_jit).
TROPICAL_GEMM_EXPORT WarmResult warm_kernel(const CacheSettings& settings, const KernelInfo& kernel, int arch);

enum class CacheEntryKind : std::uint8_t {
    Cubin,      // machine code for exactly the entry's architecture: what a warm start loads
    Ptx,        // the PTX compiled with that CUBIN: the portable copy
    PtxForJit,  // PTX alone, for a device newer than the NVRTC that compiled it
};

// "cubin", "ptx", "jit.ptx": the file's extension.
TROPICAL_GEMM_EXPORT std::string_view to_string(CacheEntryKind kind) noexcept;

// One file of the cache, as named on disk: v1/sm_<arch>/<kernel>-<key>.{cubin,ptx,jit.ptx}.
struct CacheEntry {
    std::string kernel;                // the kernel's name
    const KernelInfo* info = nullptr;  // its registry entry; nullptr for a kernel this library lacks
    int arch = 0;                      // XY of sm_XY
    CacheEntryKind kind = CacheEntryKind::Cubin;
    std::string key;  // 32 hex digits
    std::filesystem::path path;
    std::uintmax_t bytes = 0;
    // The file's modification time: the library touches an entry every time it uses it.
    std::chrono::system_clock::time_point last_used;
    bool valid = false;   // the header, the length and the checksum verify
    std::string problem;  // why not, when !valid ("corrupted (checksum mismatch)")
    // Whether this library would look this entry up: its key matches the kernel's source, options
    // and the NVRTC version recorded in the cache. Empty where the cache records no compiler.
    std::optional<bool> current;
};

struct CacheListing {
    std::filesystem::path directory;  // the format folder (root/v1)
    std::vector<CacheEntry> entries;  // by architecture, then registry order, then kind
    std::uintmax_t entry_bytes = 0;   // the entries' total size
    std::size_t temp_files = 0;       // unfinished writes (in flight, or left by a killed process)
    // The NVRTC that filled the cache, from the record kept beside the entries.
    struct Compiler {
        int major = 0, minor = 0;
        std::string library_path;
    };
    std::optional<Compiler> compiler;
};

// Every entry of the cache at settings.root (whether or not settings.enabled), each read and
// verified. A missing folder is an empty listing. Files this library did not create are ignored.
// Below the root no link is followed: a link, FIFO, socket, device or folder with an entry's name
// is listed as an entry that is not valid (problem says what it is), and a link or anything but a
// folder in place of v1 or sm_XY is not walked into (one warning names it and says why). Entries
// are judged by the trust rules the library loads with (those of a folder it refuses are listed
// as not trusted), and never read beyond 64 MiB.
TROPICAL_GEMM_EXPORT CacheListing list_cache(const CacheSettings& settings);

// Loads a CUBIN (or PTX) entry with the driver on CUDA device `device_ordinal` and looks up its
// kernel, then unloads it: proof that the device accepts it. Throws InvalidArgument for an entry
// that does not verify, NoDriver, NoDevice, or CudaError (e.g. CUDA_ERROR_NO_BINARY_FOR_GPU).
// Returns false, having done nothing, when the entry is gone since it was listed (another process
// cleared or trimmed the cache meanwhile).
TROPICAL_GEMM_EXPORT bool load_cache_entry(const CacheEntry& entry, int device_ordinal = 0);

struct RemovedFiles {
    std::size_t files = 0;
    std::uintmax_t bytes = 0;
    std::vector<CacheEntry> entries;  // the entries removed (temp files and the record only counted)
};

// Removes every entry of this format folder, the compiler record and temp files left by killed
// writers (no writer holds them locked; on a file system without locks, not written for 30 s), then the
// folders left empty. Files this library did not create are never touched; links and special files
// in the library's names (an entry's, v1, sm_XY) are removed (the link, never what it points to).
// Nothing in a folder that the trust rules refuse is removed, and no link is followed: what is left
// is said in a warning. Processes using the cache at the same time are not harmed: a removed entry
// is a miss, recompiled.
TROPICAL_GEMM_EXPORT RemovedFiles clear_cache(const CacheSettings& settings);

// Removes entries until the entries total at most `max_bytes`: entries that fail to verify first,
// then the least recently used. A CUBIN and its PTX twin are removed together. Temp files left by
// killed writers are removed too (counted in `files`; `bytes` counts the entries removed).
TROPICAL_GEMM_EXPORT RemovedFiles trim_cache(const CacheSettings& settings, std::uintmax_t max_bytes);

}  // namespace tropical
