#pragma once
// A small warm cache for the fault-injection tests, and the places in it where something can be
// put in the way: one kernel, stored as a CUBIN with its PTX for sm_90 and as PTX for the JIT for
// an architecture newer than the fake compiler knows.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <tropical/cache.hpp>
#include "catalogue/kernel_source.hpp"
#include "loader/kernel_binaries.hpp"
#include "nvrtc/compile_options.hpp"
#include "support/fake_compiler.hpp"

namespace tropical::testing {

enum class Position { Cubin, Ptx, JitPtx, Identity, FormatFolder, ArchFolder };

inline const char* name_of(Position p) {
    switch (p) {
    case Position::Cubin: return "Cubin";
    case Position::Ptx: return "Ptx";
    case Position::JitPtx: return "JitPtx";
    case Position::Identity: return "Identity";
    case Position::FormatFolder: return "FormatFolder";
    case Position::ArchFolder: return "ArchFolder";
    }
    return "?";
}

inline bool is_entry(Position p) { return p == Position::Cubin || p == Position::Ptx || p == Position::JitPtx; }

inline const KernelInfo& scenario_kernel() { return *find_kernel("tropical_gemm_f32_maxplus"); }
inline constexpr int kArch = 90;
inline constexpr int kNewArch = 130;  // newer than the fake compiler knows: stored as PTX for the JIT

// What a process does: both binaries of the kernel. 0 if both are right (10, 11: which is wrong),
// with how many came from the disk in `hits`.
inline int look_up(const std::filesystem::path& root, int& hits) {
    CompilerCounters counters;
    detail::KernelBinaries binaries({true, root}, fake_compiler_source(counters));
    const auto& k = scenario_kernel();
    const auto unit = detail::kernel_source(k);
    const auto cubin = binaries.get(k, kArch);
    const auto jit = binaries.get(k, kNewArch);
    const auto ptx = FakeCompiler::expected(k.name, unit, detail::compile_options(120, true)).ptx;
    std::vector<std::byte> ptx_image(reinterpret_cast<const std::byte*>(ptx.data()),
                                     reinterpret_cast<const std::byte*>(ptx.data()) + ptx.size() + 1);
    hits = (cubin->from_disk ? 1 : 0) + (jit->from_disk ? 1 : 0);
    if (cubin->image != FakeCompiler::expected(k.name, unit, detail::compile_options(kArch, false)).cubin) return 10;
    return jit->image == ptx_image ? 0 : 11;
}

inline int look_up(const std::filesystem::path& root) {
    int hits = 0;
    return look_up(root, hits);
}

inline std::filesystem::path entry_file(const std::filesystem::path& root, int arch, std::string_view suffix) {
    const auto folder = cache_format_directory(root) / ("sm_" + std::to_string(arch));
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        if (name.ends_with(suffix) && !(suffix == ".ptx" && name.ends_with(".jit.ptx"))) return e.path();
    }
    return {};
}

// Where `p` is in the cache at `root`, once look_up has filled it.
inline std::filesystem::path position_path(const std::filesystem::path& root, Position p) {
    switch (p) {
    case Position::Cubin: return entry_file(root, kArch, ".cubin");
    case Position::Ptx: return entry_file(root, kArch, ".ptx");
    case Position::JitPtx: return entry_file(root, kNewArch, ".jit.ptx");
    case Position::Identity: return cache_format_directory(root) / "nvrtc-identity";
    case Position::FormatFolder: return cache_format_directory(root);
    case Position::ArchFolder: return cache_format_directory(root) / ("sm_" + std::to_string(kArch));
    }
    return {};
}

}  // namespace tropical::testing
