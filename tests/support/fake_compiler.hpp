#pragma once
// A compiler that needs no NVRTC: deterministic output from its input, every call counted, and an
// optional delay that widens race windows. Only the cache tests use it.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "loader/kernel_binaries.hpp"
#include "nvrtc/compiler.hpp"

namespace tropical::testing {

struct CompilerCounters {
    std::atomic<int> loads{0};
    std::atomic<int> compiles{0};
    std::atomic<int> in_flight{0};       // compiles running now
    std::atomic<int> most_in_flight{0};  // the most that ran at once
};

class FakeCompiler final : public detail::Compiler {
public:
    FakeCompiler(CompilerCounters& counters, std::chrono::milliseconds delay) : counters_(counters), delay_(delay) {}
    int major_version() const override { return 13; }
    int minor_version() const override { return 0; }
    std::string library_path() const override { return {}; }
    const std::vector<int>& supported_archs() const override { return archs_; }
    detail::CompiledKernel compile(std::string_view name, std::string_view source,
                                   const std::vector<std::string>& options) const override {
        ++counters_.compiles;
        const int now = ++counters_.in_flight;
        for (int most = counters_.most_in_flight.load(); now > most;)
            if (counters_.most_in_flight.compare_exchange_weak(most, now)) break;
        std::this_thread::sleep_for(delay_);
        --counters_.in_flight;
        return expected(name, source, options);
    }
    // What compile() returns for these inputs, for tests to compare against.
    static detail::CompiledKernel expected(std::string_view name, std::string_view source,
                                           const std::vector<std::string>& options) {
        std::string seed(name);
        for (const auto& o : options) seed += "|" + o;
        const auto hash = XXH3_64bits_withSeed(source.data(), source.size(), XXH3_64bits(seed.data(), seed.size()));
        detail::CompiledKernel out;
        out.ptx = "// fake PTX of " + std::string(name) + " " + std::to_string(hash);
        for (int i = 0; i < 64; ++i) out.cubin.push_back(static_cast<std::byte>((hash >> (i % 8 * 8)) & 0xff));
        return out;
    }

private:
    CompilerCounters& counters_;
    std::chrono::milliseconds delay_;
    std::vector<int> archs_{75, 80, 86, 89, 90, 100, 120};
};

inline detail::CompilerSource fake_compiler_source(CompilerCounters& counters,
                                                   std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
    return {[&counters, delay]() -> std::unique_ptr<detail::Compiler> {
                ++counters.loads;
                return std::make_unique<FakeCompiler>(counters, delay);
            },
            ""};
}

}  // namespace tropical::testing
