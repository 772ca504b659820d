// The results in words, for people.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "render.hpp"
#include "words.hpp"

namespace warmup {
namespace {

std::string compiler_words(const tropical::CacheListing& listing) {
    return listing.compiler ? fmt::format("filled by NVRTC {}.{}, {}", listing.compiler->major, listing.compiler->minor,
                                          listing.compiler->library_path)
                            : "no compiler recorded";
}

std::string format_folder(const tropical::CacheSettings& settings) {
    return tropical::cache_format_directory(settings.root).string();
}

}  // namespace

void print_text(const WarmReport& r, OutputMode mode) {
    if (mode == OutputMode::Quiet) return;
    if (!r.note.empty()) std::printf("note: %s\n", r.note.c_str());
    std::printf("%s: %s x %s: %zu compiled, %zu already cached%s%s in %.2f s\n", format_folder(r.settings).c_str(),
                count_of(r.kernels_selected, "kernel", "kernels").c_str(), arch_list(r.archs).c_str(), r.compiled,
                r.cached, r.failed ? fmt::format(", {} FAILED", r.failed).c_str() : "",
                r.skipped ? fmt::format(", {} skipped", r.skipped).c_str() : "", r.seconds);
    if (r.compiled > 0) {
        std::string line;
        for (const auto& [id, g] : r.by_group)
            if (g.compiled)
                line += fmt::format("{}{} {} {:.1f} s", line.empty() ? "" : ", ", arch_name(id.first),
                                    tropical::to_string(id.second), g.seconds);
        std::printf("compile time by group, summed over its kernels (%u jobs): %s\n", r.jobs, line.c_str());
    }
}

// The listing is what was asked for: --quiet does not silence it.
void print_text(const ListReport& r, OutputMode) {
    std::printf("Kernel cache %s (%s)\n", r.listing.directory.string().c_str(), compiler_words(r.listing).c_str());
    std::printf("%s, %s%s\n\n", count_of(r.entries.size(), "entry", "entries").c_str(), human_bytes(r.bytes).c_str(),
                r.archs.empty() ? "" : fmt::format(", for {}", arch_list({r.archs.begin(), r.archs.end()})).c_str());
    // Scripts and tests match these columns: keep their order and widths.
    std::printf("%-34s %-12s %-5s %-8s %s\n", "kernel", "group", "type", "semiring", "cached for");
    for (const tropical::KernelInfo* k : r.kernels) {
        const auto it = r.cached.find(k->index);
        const std::vector<int> on =
            it == r.cached.end() ? std::vector<int>{} : std::vector<int>(it->second.begin(), it->second.end());
        std::printf("%-34s %-12s %-5s %-8s %s\n", std::string(k->name).c_str(),
                    std::string(tropical::to_string(k->group)).c_str(),
                    std::string(tropical::to_string(k->dtype)).c_str(), std::string(semiring_name(*k)).c_str(),
                    on.empty() ? "-" : arch_list(on).c_str());
    }
    if (r.stale)
        std::printf(
            "\n%s for another kernel source or NVRTC version, no longer used: --max-size removes them "
            "first, --clear removes everything.\n",
            count_of(r.stale, "valid entry is", "valid entries are").c_str());
    if (r.invalid)
        std::printf("\n%s verification; --verify names them.\n",
                    count_of(r.invalid, "entry fails", "entries fail").c_str());
    if (r.listing.temp_files)
        std::printf("\n%s (temp files) in the cache.\n",
                    count_of(r.listing.temp_files, "unfinished write", "unfinished writes").c_str());
}

void print_text(const VerifyReport& r, OutputMode mode) {
    // The bad entries are the errors of this command: named even with --quiet.
    for (std::size_t i = 0; i < r.entries.size(); ++i) {
        const auto& e = r.entries[i];
        if (!e.valid) std::printf("BAD     %s: %s\n", e.path.string().c_str(), e.problem.c_str());
        else if (r.loads[i].ok == false)
            std::printf("NO LOAD %s: %s\n", e.path.string().c_str(), r.loads[i].error.c_str());
    }
    if (mode == OutputMode::Quiet) return;
    std::printf("%s: %s checked, %zu %s verification", r.listing.directory.string().c_str(),
                count_of(r.entries.size(), "entry", "entries").c_str(), r.invalid, r.invalid == 1 ? "fails" : "fail");
    if (r.no_gpu.empty())
        std::printf("; %zu CUBINs loaded on this machine's GPU, %zu refused", r.loaded, r.load_failures);
    std::printf("\n");
    if (!r.no_gpu.empty()) std::printf("CUBINs not loaded on a GPU: %s\n", r.no_gpu.c_str());
    if (r.invalid)
        std::printf(
            "Bad entries are recompiled and overwritten when next used; run the warm-up again to repair them "
            "now, or --clear to start afresh.\n");
}

void print_text(const ClearReport& r, OutputMode mode) {
    if (mode == OutputMode::Quiet) return;
    std::printf("%s: removed %zu files (%zu entries), %s\n", format_folder(r.settings).c_str(), r.removed.files,
                r.removed.entries.size(), human_bytes(r.removed.bytes).c_str());
}

void print_text(const TrimReport& r, OutputMode mode) {
    if (mode == OutputMode::Quiet) return;
    for (const auto& e : r.removed.entries)
        std::printf("removed %-6s %-34s %-7s last used %s\n", arch_name(e.arch).c_str(), e.kernel.c_str(),
                    std::string(tropical::to_string(e.kind)).c_str(), utc_time(e.last_used).c_str());
    std::printf("%s: %s of entries, limit %s: removed %zu entries (%s)\n", format_folder(r.settings).c_str(),
                human_bytes(r.bytes_before).c_str(), human_bytes(r.max_bytes).c_str(), r.removed.entries.size(),
                human_bytes(r.removed.bytes).c_str());
}

}  // namespace warmup
