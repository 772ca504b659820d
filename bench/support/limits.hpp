#pragma once
// The hardware limits that the GPU suites report fractions of, and their --limits flag:
//   --limits=f32:33.4,f64:16.7,i32:33.4,i64:8.4,u8:535,hbm:4300
// Tops per type (u8: OrAnd's T terms/s, 32 per LOP3), and HBM bandwidth in GB/s. The defaults are the H200's from shared/REFERENCE.md;
// give others for another GPU. The 16-bit types': two terms an instruction, twice the 32-bit figure
// (int16: the DPX probe's 66.8, issue 35), until bench/NOTES.md has their measured ceilings.
#include <map>
#include <string>

#include <fmt/format.h>

#include <benchmark/benchmark.h>

namespace tropical::bench {

using Limits = std::map<std::string, double>;

inline Limits default_limits() {
    return {{"f32", 33.4}, {"f64", 16.7},  {"i32", 33.4}, {"i64", 8.4}, {"u8", 535},
            {"hbm", 4300}, {"bf16", 66.8}, {"f16", 66.8}, {"i16", 66.8}};
}

// Reads --limits=... into `limits` and removes it from argv before Google Benchmark sees it.
inline void take_limits(int& argc, char** argv, Limits& limits) {
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (!arg.starts_with("--limits=")) {
            argv[out++] = argv[i];
            continue;
        }
        std::string rest = arg.substr(9);
        while (!rest.empty()) {
            const auto comma = rest.find(',');
            const std::string item = rest.substr(0, comma);
            rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
            const auto colon = item.find(':');
            if (colon != std::string::npos) limits[item.substr(0, colon)] = std::stod(item.substr(colon + 1));
        }
    }
    argc = out;
}

// Records the limits in the JSON output's context.
inline void record_limits(const Limits& limits) {
    for (const auto& [name, value] : limits) benchmark::AddCustomContext("limit_" + name, fmt::format("{}", value));
}

}  // namespace tropical::bench
