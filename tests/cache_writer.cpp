// The helper of the killed-writer campaign (cache_faults_test.cpp), through the library's real
// publish and read paths with a fake compiler whose output checks itself:
//   cache_writer write <cache root> <seed>   publishes entries in a loop until it is killed
//   cache_writer check <cache root>          reads every entry; exits 1 if any final-named file is
//                                            partial, or if a read hands out anything incomplete
// A payload records its own seed and length, so a truncated one is caught even if the entry's
// header and checksum were somehow not.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <tropical/cache.hpp>
#include <tropical/kernels.hpp>
#include "loader/kernel_binaries.hpp"
#include "nvrtc/compiler.hpp"

using namespace tropical;
using namespace tropical::detail;

namespace {

std::uint64_t next(std::uint64_t& state) {  // splitmix64
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// 16 bytes of header (seed, length), then `length` bytes drawn from the seed: 1 to 128 KiB, so
// that a kill often lands in the middle of a write.
std::vector<std::byte> payload(std::uint64_t seed) {
    std::uint64_t state = seed;
    const std::uint64_t length = 1 + next(state) % (128 * 1024);
    std::vector<std::byte> out(16 + length);
    std::memcpy(out.data(), &seed, 8);
    std::memcpy(out.data() + 8, &length, 8);
    for (std::uint64_t i = 0; i < length; ++i) out[16 + i] = static_cast<std::byte>(next(state) & 0xff);
    return out;
}

bool payload_is_whole(std::span<const std::byte> bytes) {
    if (bytes.size() < 16) return false;
    std::uint64_t seed = 0;
    std::memcpy(&seed, bytes.data(), 8);
    const auto expected = payload(seed);
    return std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end());
}

class SelfCheckingCompiler final : public Compiler {
public:
    explicit SelfCheckingCompiler(int minor) : minor_(minor) {}
    int major_version() const override { return 99; }
    int minor_version() const override { return minor_; }
    std::string library_path() const override { return {}; }
    const std::vector<int>& supported_archs() const override { return archs_; }
    CompiledKernel compile(std::string_view name, std::string_view source,
                           const std::vector<std::string>&) const override {
        const std::uint64_t name_hash = XXH3_64bits(name.data(), name.size());
        const std::uint64_t seed =
            XXH3_64bits_withSeed(source.data(), source.size(), name_hash) ^ static_cast<std::uint64_t>(minor_);
        CompiledKernel out;
        out.cubin = payload(seed);
        const auto ptx = payload(seed + 1);
        out.ptx.assign(reinterpret_cast<const char*>(ptx.data()), ptx.size());
        return out;
    }

private:
    int minor_;
    std::vector<int> archs_{90};
};

// The kernels a writer publishes and the checker looks up: the catalogue's first 64. A writer is
// killed within 60 ms, in its first round or a later one (new keys: the same case). A lookup of a
// kernel no writer reached compiles and publishes the fake payloads (up to 256 KiB a kernel), so
// with the whole catalogue each check's time grew with it: under ASan on the 2-core CI machine, 200
// checks of 486 kernels ran past the test's 600 s.
std::span<const KernelInfo> written_kernels() {
    const auto all = kernel_registry();
    return all.first(std::min<std::size_t>(all.size(), 64));
}

// A compiler of another version each round, named explicitly so that the record on disk is not
// trusted for it: every round compiles and publishes every kernel again, under new keys.
CompilerSource source(int minor) {
    return {[minor] { return std::make_unique<SelfCheckingCompiler>(minor); }, "fake-nvrtc-" + std::to_string(minor)};
}

int write(const std::string& root, int seed) {
    // The test times its kill from this line, not from the process's start (slow on a loaded machine).
    std::printf("publishing\n");
    std::fflush(stdout);
    for (int round = 0; round < 1000; ++round) {
        KernelBinaries binaries({true, root}, source(seed * 1000 + round));
        for (const auto& kernel : written_kernels()) binaries.get(kernel, 90);
    }
    return 0;
}

int check(const std::string& root) {
    int problems = 0;
    auto problem = [&](const std::string& what) {
        std::fprintf(stderr, "cache_writer check: %s\n", what.c_str());
        ++problems;
    };
    const CacheListing listing = list_cache({true, root});
    CacheStore store(root, CacheStore::Access::Administer);
    for (const auto& entry : listing.entries) {
        if (entry.path.filename().string().find(".tmp-") != std::string::npos)
            problem("a temp file was listed as an entry: " + entry.path.string());
        // Files appear under their final name only once complete (temp file, then rename).
        if (!entry.valid) problem(entry.path.string() + " is partial or corrupt: " + entry.problem);
        // Read again through the store, verified against its name (kind and key).
        const auto state = store.inspect_entry(entry.arch, entry.path.filename().string());
        if (!state.present) continue;  // cleared meanwhile
        if (state.valid && !payload_is_whole(state.payload))
            problem(entry.path.string() + " verifies but holds an incomplete payload");
    }
    // The lookup every process makes, with the version the record names: whatever it takes from
    // the disk must be whole.
    KernelBinaries binaries({true, root}, {[] { return std::make_unique<SelfCheckingCompiler>(0); }, ""});
    int hits = 0;
    for (const auto& kernel : written_kernels()) {
        const auto binary = binaries.get(kernel, 90);
        if (!binary->from_disk) continue;
        ++hits;
        if (!payload_is_whole(binary->image))
            problem(std::string(kernel.name) + ": the lookup handed out a partial CUBIN");
    }
    std::printf("entries=%zu temp_files=%zu lookup_hits=%d\n", listing.entries.size(), listing.temp_files, hits);
    return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "write") return write(argv[2], std::atoi(argv[3]));
    if (argc == 3 && std::string(argv[1]) == "check") return check(argv[2]);
    std::fprintf(stderr, "usage: cache_writer write <cache root> <seed> | check <cache root>\n");
    return 2;
}
