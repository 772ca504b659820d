// Viterbi decoding with tropical-gemm: a chain of small dependent max-plus products.
//
// For B sequences over S states, with start scores v_0[b,s] (one row per sequence) and transition
// scores W[k,s] (log-probabilities, the same every step), the best path of T steps of sequence b is
// the one that maximises v_0[b,s_0] + W[s_0,s_1] + ... + W[s_{T-1},s_T]. The Viterbi recursion
// finds it in T dependent steps, each a max-plus product of (B x S) by (S x S):
//
//     v_{t+1}[b,s] = max_k v_t[b,k] + W[k,s]          back_t[b,s] = the k that attains it
//
// then walks back from the best final state: s_T = argmax_s v_T[b,s], s_t = back_t[b, s_{t+1}].
// (A hidden Markov model adds its emission scores to v between steps, an elementwise add that this
// library does not do: the chain of products is the part that needs it.)
//
// On a GPU each step is one gemm_with_argmax<MaxPlus> into its slice of a T x B x S int32 buffer of
// back-pointers. The best final state of each sequence is one more product with argmax, of v_T by a
// column of MaxPlus's one (0), which also gives the best score; tropical::backtrack then walks the
// back-pointers on the GPU, so that only the B x (T + 1) paths are copied to the host, not the
// T x B x S tables. Without a GPU the program says so in one line and runs the same steps on the CPU
// with the library's host functions (tropical/host.hpp). Either way it checks every decoded path
// against a plain Viterbi loop on the CPU. It uses the installed headers only.
//
//   viterbi [--batch B] [--states S] [--steps T] [--seed X]
//
// Exit status: 0 when every path and score agrees with the plain loop, 1 when one does not (or on an
// error), 2 for a bad command line.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include <tropical/host.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// --- the command line ---------------------------------------------------------------------------

struct Options {
    std::int64_t batch = 0, states = 0, steps = 0;  // 0: the default for the device that decodes
    std::uint64_t seed = 1;
};

struct Defaults {
    std::int64_t batch, states, steps;
};
constexpr Defaults kGpuDefaults{64, 256, 512};  // the chain row of issue 14 that has a target
constexpr Defaults kCpuDefaults{16, 128, 512};

void print_usage(std::FILE* to) {
    std::fprintf(to,
                 "usage: viterbi [--batch B] [--states S] [--steps T] [--seed X]\n"
                 "  --batch B   sequences decoded together (default %lld on a GPU, %lld on the CPU)\n"
                 "  --states S  states of the chain (default %lld, %lld)\n"
                 "  --steps T   steps of each path (default %lld)\n"
                 "  --seed X    seed of the random scores (default 1)\n",
                 static_cast<long long>(kGpuDefaults.batch), static_cast<long long>(kCpuDefaults.batch),
                 static_cast<long long>(kGpuDefaults.states), static_cast<long long>(kCpuDefaults.states),
                 static_cast<long long>(kGpuDefaults.steps));
}

// Returns false (after printing why) when the command line is not understood.
bool parse_options(int argc, char** argv, Options& options, bool& help) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        std::int64_t* size = arg == "--batch"    ? &options.batch
                             : arg == "--states" ? &options.states
                             : arg == "--steps"  ? &options.steps
                                                 : nullptr;
        if (!size && arg != "--seed") {
            std::fprintf(stderr, "viterbi: unknown option '%s'\n", argv[i]);
            return false;
        }
        if (i + 1 == argc) {
            std::fprintf(stderr, "viterbi: %s needs a value\n", argv[i]);
            return false;
        }
        const std::string value = argv[++i];
        std::size_t used = 0;
        try {
            if (size) *size = std::stoll(value, &used);
            else options.seed = std::stoull(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size() || value.starts_with('-') || (size && (*size < 1 || *size > 100'000))) {
            std::fprintf(stderr, "viterbi: bad value '%s' for %s (%s)\n", value.c_str(), argv[i - 1],
                         size ? "a whole number from 1 to 100000" : "a non-negative integer");
            return false;
        }
    }
    return true;
}

// --- the model and the decoded paths ------------------------------------------------------------

struct Model {
    std::int64_t batch, states, steps;
    std::vector<float> start;       // B x S, row-major
    std::vector<float> transition;  // S x S, row-major: W[k,s] scores the move from k to s
};

// Random log-probability-like scores in [-8, 0).
Model random_model(std::int64_t batch, std::int64_t states, std::int64_t steps, std::uint64_t seed) {
    Model m{batch, states, steps, std::vector<float>(static_cast<std::size_t>(batch * states)),
            std::vector<float>(static_cast<std::size_t>(states * states))};
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<float> score(-8.0f, 0.0f);
    for (float& x : m.start) x = score(random);
    for (float& x : m.transition) x = score(random);
    return m;
}

struct Decoded {
    std::vector<std::int32_t> paths;  // B x (T + 1): s_0 ... s_T of each sequence
    std::vector<float> scores;        // B: the best final score, max_s v_T[b,s]
};

// The plain loop's walk back, for the check: from the final scores v_T (B x S) through back
// (T x B x S), on the host.
Decoded walk_back(const Model& m, const std::vector<float>& final_scores, const std::vector<std::int32_t>& back) {
    const std::int64_t B = m.batch, S = m.states, T = m.steps;
    Decoded d{std::vector<std::int32_t>(static_cast<std::size_t>(B * (T + 1))),
              std::vector<float>(static_cast<std::size_t>(B))};
    for (std::int64_t b = 0; b < B; ++b) {
        std::int64_t best = 0;  // the smallest s on a tie, as the argmax of the products
        for (std::int64_t s = 1; s < S; ++s)
            if (final_scores[b * S + s] > final_scores[b * S + best]) best = s;
        d.scores[b] = final_scores[b * S + best];
        std::int32_t* path = d.paths.data() + b * (T + 1);
        path[T] = static_cast<std::int32_t>(best);
        for (std::int64_t t = T - 1; t >= 0; --t) {
            path[t] = back[static_cast<std::size_t>((t * B + b) * S + path[t + 1])];
            if (path[t] < 0 || path[t] >= S) throw std::runtime_error("a back-pointer out of range");
        }
    }
    return d;
}

// --- decoding -----------------------------------------------------------------------------------

struct Run {
    Decoded decoded;
    double first_ms = 0;      // GPU only: one step, which loads (or compiles) the kernel
    double steps_ms = 0;      // the T steps, from the first launch to the last result being ready
    double walk_back_ms = 0;  // the best final states, the walk back and (GPU) copying the paths
};

Run decode_on_gpu(const Model& m) {
    const std::int64_t B = m.batch, S = m.states, T = m.steps;
    const tropical::DeviceBuffer<float> w{std::span<const float>(m.transition)};
    const tropical::DeviceBuffer<float> start{std::span<const float>(m.start)};
    const tropical::DeviceBuffer<float> ping(static_cast<std::size_t>(B * S)), pong(static_cast<std::size_t>(B * S));
    const tropical::DeviceBuffer<std::int32_t> back(static_cast<std::size_t>(T * B * S));
    const auto step = [&](std::int64_t t) {
        const float* in = t == 0 ? start.data() : (t % 2 ? ping.data() : pong.data());
        float* out = t % 2 ? pong.data() : ping.data();
        tropical::gemm_with_argmax<tropical::MaxPlus>(tropical::row_major(in, B, S), w.row_major(S, S),
                                                      tropical::row_major(out, B, S),
                                                      tropical::row_major(back.data() + t * B * S, B, S));
    };
    const tropical::DeviceBuffer<float>& last = T % 2 ? ping : pong;
    const tropical::DeviceBuffer<float> zeros{std::span<const float>(std::vector<float>(static_cast<std::size_t>(S)))};
    const tropical::DeviceBuffer<float> best(static_cast<std::size_t>(B));
    const tropical::DeviceBuffer<std::int32_t> ends(static_cast<std::size_t>(B));
    const tropical::DeviceBuffer<std::int32_t> paths(static_cast<std::size_t>(B * (T + 1)));
    Run r;
    auto clock = Clock::now();
    step(0);  // the first call of the kernel in this process loads it; step 0 is redone below
    (void)ping.to_host();
    r.first_ms = milliseconds_since(clock);

    // Launches on the default stream, asynchronous; the copy of v_T waits for the last one.
    clock = Clock::now();
    for (std::int64_t t = 0; t < T; ++t) step(t);
    (void)last.to_host();  // waits for the last step
    r.steps_ms = milliseconds_since(clock);

    // The best final states (the smallest s on a tie, as walk_back's) and the walk, on the GPU.
    clock = Clock::now();
    tropical::gemm_with_argmax<tropical::MaxPlus>(last.row_major(B, S), zeros.row_major(S, 1), best.row_major(B, 1),
                                                  ends.row_major(B, 1));
    tropical::backtrack(tropical::batched(tropical::MatrixView<const std::int32_t>(back.row_major(B, S)), B * S), T,
                        ends.row_major(B, 1), paths.row_major(B, T + 1));
    r.decoded = {paths.to_host(), best.to_host()};
    r.walk_back_ms = milliseconds_since(clock);
    return r;
}

// The same steps in host memory, on the library's CPU kernels.
Run decode_on_cpu(const Model& m) {
    const std::int64_t B = m.batch, S = m.states, T = m.steps;
    std::vector<float> v = m.start, next(v.size());
    std::vector<std::int32_t> back(static_cast<std::size_t>(T * B * S));
    Run r;
    auto clock = Clock::now();
    for (std::int64_t t = 0; t < T; ++t) {
        tropical::host::gemm_with_argmax<tropical::MaxPlus>(tropical::row_major<const float>(v.data(), B, S),
                                                            tropical::row_major<const float>(m.transition.data(), S, S),
                                                            tropical::row_major(next.data(), B, S),
                                                            tropical::row_major(back.data() + t * B * S, B, S));
        v.swap(next);
    }
    r.steps_ms = milliseconds_since(clock);
    clock = Clock::now();
    const std::vector<float> zeros(static_cast<std::size_t>(S));
    std::vector<std::int32_t> ends(static_cast<std::size_t>(B));
    Decoded& d = r.decoded;
    d.scores.resize(static_cast<std::size_t>(B));
    d.paths.resize(static_cast<std::size_t>(B * (T + 1)));
    tropical::host::gemm_with_argmax<tropical::MaxPlus>(
        tropical::row_major<const float>(v.data(), B, S), tropical::row_major<const float>(zeros.data(), S, 1),
        tropical::row_major(d.scores.data(), B, 1), tropical::row_major(ends.data(), B, 1));
    tropical::host::backtrack(tropical::batched(tropical::row_major<const std::int32_t>(back.data(), B, S), B * S), T,
                              tropical::row_major<const std::int32_t>(ends.data(), B, 1),
                              tropical::row_major(d.paths.data(), B, T + 1));
    r.walk_back_ms = milliseconds_since(clock);
    return r;
}

// The plain Viterbi loop, for the check: the same sums in the same order, so the same floats.
Decoded reference_viterbi(const Model& m) {
    const std::int64_t B = m.batch, S = m.states, T = m.steps;
    std::vector<float> v = m.start, next(v.size());
    std::vector<std::int32_t> back(static_cast<std::size_t>(T * B * S));
    for (std::int64_t t = 0; t < T; ++t) {
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t s = 0; s < S; ++s) {
                float best = -std::numeric_limits<float>::infinity();
                std::int32_t from = -1;
                for (std::int64_t k = 0; k < S; ++k) {
                    const float through_k = v[b * S + k] + m.transition[k * S + s];
                    if (through_k > best) best = through_k, from = static_cast<std::int32_t>(k);  // first k wins ties
                }
                next[b * S + s] = best;
                back[static_cast<std::size_t>((t * B + b) * S + s)] = from;
            }
        v.swap(next);
    }
    return walk_back(m, v, back);
}

// Every path equals the plain loop's, and every path's own score, summed along it, is its best score.
bool check(const Model& m, const Decoded& got, const Decoded& expected) {
    const std::int64_t S = m.states, T = m.steps;
    std::int64_t wrong = 0;
    for (std::int64_t b = 0; b < m.batch; ++b) {
        const std::int32_t* path = got.paths.data() + b * (T + 1);
        float along = m.start[b * S + path[0]];
        for (std::int64_t t = 0; t < T; ++t) along += m.transition[path[t] * S + path[t + 1]];
        const bool same_path =
            std::equal(path, path + T + 1, expected.paths.data() + b * (T + 1)) && got.scores[b] == expected.scores[b];
        if ((!same_path || along != got.scores[b]) && ++wrong <= 5)
            std::printf("  MISMATCH in sequence %lld: score %.9g (%.9g along its path), the plain loop %.9g%s\n",
                        static_cast<long long>(b), static_cast<double>(got.scores[b]), static_cast<double>(along),
                        static_cast<double>(expected.scores[b]), same_path ? "" : ", another path");
    }
    if (wrong) {
        std::printf("Check FAILED: %lld of %lld paths differ from the plain Viterbi loop\n",
                    static_cast<long long>(wrong), static_cast<long long>(m.batch));
        return false;
    }
    std::printf("Check passed: all %lld paths of %lld states and their scores agree with the plain Viterbi loop\n",
                static_cast<long long>(m.batch), static_cast<long long>(T + 1));
    return true;
}

std::string first_line(std::string_view message) {
    std::string line(message.substr(0, message.find('\n')));
    while (!line.empty() && (line.back() == '.' || line.back() == ' ')) line.pop_back();
    return line;
}

int run(const Options& options) {
    bool gpu = false;
    try {
        const tropical::CudaContext& context = tropical::CudaContext::for_device(0);
        gpu = true;
        std::printf("GPU 0: %s (sm_%d)\n", context.name().c_str(), context.arch());
    } catch (const tropical::NoDriver& e) {
        std::printf("No CUDA GPU available (%s): decoding on the CPU instead\n", first_line(e.what()).c_str());
    } catch (const tropical::NoDevice& e) {
        std::printf("No CUDA GPU available (%s): decoding on the CPU instead\n", first_line(e.what()).c_str());
    }
    const Defaults& d = gpu ? kGpuDefaults : kCpuDefaults;
    const Model m = random_model(options.batch ? options.batch : d.batch, options.states ? options.states : d.states,
                                 options.steps ? options.steps : d.steps, options.seed);
    std::printf("Viterbi: %lld sequences, %lld states, %lld steps, seed %llu\n", static_cast<long long>(m.batch),
                static_cast<long long>(m.states), static_cast<long long>(m.steps),
                static_cast<unsigned long long>(options.seed));

    const Run r = gpu ? decode_on_gpu(m) : decode_on_cpu(m);
    if (gpu) std::printf("  first step (loads the kernel, or compiles it if the cache is cold): %.1f ms\n", r.first_ms);
    std::printf(
        "  %lld max-plus steps (%lld x %lld) (x) (%lld x %lld) with argmax on the %s: %.3f ms, %.2f µs per step\n",
        static_cast<long long>(m.steps), static_cast<long long>(m.batch), static_cast<long long>(m.states),
        static_cast<long long>(m.states), static_cast<long long>(m.states), gpu ? "GPU" : "CPU", r.steps_ms,
        1e3 * r.steps_ms / static_cast<double>(m.steps));
    std::printf("  best final states and the walk back on the %s: %.2f ms\n",
                gpu ? "GPU (tropical::backtrack), with the copy of the paths" : "CPU", r.walk_back_ms);

    const auto clock = Clock::now();
    const Decoded expected = reference_viterbi(m);
    std::printf("  plain Viterbi loop on the CPU: %.1f ms\n", milliseconds_since(clock));
    return check(m, r.decoded, expected) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    bool help = false;
    if (!parse_options(argc, argv, options, help)) {
        print_usage(stderr);
        return 2;
    }
    if (help) {
        print_usage(stdout);
        return 0;
    }
    try {
        return run(options);
    } catch (const tropical::Error& e) {
        std::fprintf(stderr, "viterbi: %s: %s\n", tropical::to_string(e.status()), e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "viterbi: %s\n", e.what());
    }
    return 1;
}
