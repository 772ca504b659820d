#pragma once
// The tool's commands. Each does its work through the public API and returns what happened as a
// result; render.hpp shows a result as text or as JSON.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>

#include "options.hpp"
#include "tool.hpp"

namespace warmup {

// --- warm (the default): compile the selected kernels into the cache ----------------------------

struct WarmTask {
    const tropical::KernelInfo* kernel = nullptr;
    int arch = 0;
    enum class Status { Pending, Compiled, Cached, Failed, Skipped } status = Status::Pending;
    double seconds = 0;
    bool ptx_for_jit = false;
    std::string error;  // why it failed
};

// "compiled", "cached", "failed", "skipped" ("pending" for a task not run yet).
const char* status_name(WarmTask::Status status);

struct WarmReport {
    tropical::CacheSettings settings;
    std::vector<int> archs;
    unsigned jobs = 1;
    std::size_t kernels_selected = 0;
    std::vector<WarmTask> tasks;  // by kernel in registry order, then by architecture
    std::size_t compiled = 0, cached = 0, failed = 0, skipped = 0;
    // The compile time of each group of kernels for each architecture, summed over its kernels.
    struct GroupTime {
        std::size_t kernels = 0, compiled = 0;
        double seconds = 0;
    };
    std::map<std::pair<int, tropical::KernelGroup>, GroupTime> by_group;  // by architecture, then group
    double seconds = 0;                                                   // the whole run
    std::optional<Fatal> error;                                           // what stopped the run before every task ran
    std::string note;  // something the user should know that is no error
    int exit_code = kSuccess;
};

// Throws Fatal for errors found before anything is compiled (no kernel selected, no GPU and no
// --arch, an architecture NVRTC does not know, a cache the environment leaves off).
WarmReport warm(const Options& options);

// --- list: the registry, and what the cache holds ------------------------------------------------

struct ListReport {
    tropical::CacheSettings settings;
    tropical::CacheListing listing;                    // the whole cache
    std::vector<tropical::CacheEntry> entries;         // the selected entries
    std::vector<const tropical::KernelInfo*> kernels;  // the selected kernels
    std::map<std::size_t, std::set<int>> cached;       // registry index -> architectures with a usable entry
    std::set<int> archs;                               // of the selected entries
    std::uintmax_t bytes = 0;                          // of the selected entries
    std::size_t invalid = 0, stale = 0;
};

ListReport list(const Options& options);

// --- verify: check each entry, and on a GPU load each CUBIN -------------------------------------

struct VerifyReport {
    tropical::CacheSettings settings;
    tropical::CacheListing listing;
    std::vector<tropical::CacheEntry> entries;  // the selected entries, each checked
    struct Load {
        std::optional<bool> ok;  // empty: not loaded
        std::string error;
    };
    std::vector<Load> loads;  // parallel to entries
    std::size_t invalid = 0, loaded = 0, load_failures = 0;
    std::string no_gpu;  // why no CUBIN was loaded; empty where a GPU was there
    int exit_code = kSuccess;
};

VerifyReport verify(const Options& options);

// --- clear and trim ------------------------------------------------------------------------------

struct ClearReport {
    tropical::CacheSettings settings;
    tropical::RemovedFiles removed;
};

ClearReport clear(const Options& options);

struct TrimReport {
    tropical::CacheSettings settings;
    std::uintmax_t max_bytes = 0;
    std::uintmax_t bytes_before = 0, bytes_after = 0;
    tropical::RemovedFiles removed;
};

TrimReport trim(const Options& options);

}  // namespace warmup
