// All-pairs shortest paths with tropical-gemm.
//
// In the min-plus semiring, (D (x) D)[i,j] = min_k D[i,k] + D[k,j]: the shortest path from i to j
// that goes through one intermediate node. Start from the distance matrix of a graph (0 on the
// diagonal, the edge weight where there is an edge, +inf elsewhere), where D holds the shortest paths
// of at most one edge; each squaring D <- D (x) D doubles that number of edges, so after
// ceil(log2(n - 1)) squarings D holds every shortest path (a shortest path has at most n - 1 edges).
//
// The program builds a random weighted directed graph, squares its distance matrix on the GPU and
// checks the result against Dijkstra's algorithm run from every node on the CPU. Without a GPU it
// says so in one line and does the same squarings on the CPU with the library's host functions
// (tropical/host.hpp: SIMD kernels on every core) instead. It uses the installed headers only, so it
// can be copied out of the tree as a starting point.
//
//   all_pairs_shortest_paths [--nodes N] [--seed S]
//
// Exit status: 0 when every distance agrees with Dijkstra, 1 when one does not (or on an error),
// 2 for a bad command line.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tropical/context.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include <tropical/gemm.hpp>
#include <tropical/host.hpp>

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr std::int64_t kDefaultNodesGpu = 2048;
constexpr std::int64_t kDefaultNodesCpu = 1024;
constexpr std::int64_t kMaxOutDegree = 16;  // out-degrees are uniform in [0, 16]: 8 on average
constexpr double kRelativeTolerance = 1e-5;

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// --- the command line ---------------------------------------------------------------------------

struct Options {
    std::int64_t nodes = 0;  // 0: the default for the device that runs the squarings
    std::uint64_t seed = 1;
};

void print_usage(std::FILE* to) {
    std::fprintf(to,
                 "usage: all_pairs_shortest_paths [--nodes N] [--seed S]\n"
                 "  --nodes N  number of nodes of the random graph (default %lld on a GPU, %lld on the CPU)\n"
                 "  --seed S   seed of the random graph (default 1)\n",
                 static_cast<long long>(kDefaultNodesGpu), static_cast<long long>(kDefaultNodesCpu));
}

template <class Integer>
bool parse_integer(std::string_view text, Integer& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

// Returns false (after printing why) when the command line is not understood.
bool parse_options(int argc, char** argv, Options& options, bool& help) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            help = true;
            return true;
        }
        const bool nodes = arg == "--nodes";
        if (!nodes && arg != "--seed") {
            std::fprintf(stderr, "all_pairs_shortest_paths: unknown option '%s'\n", argv[i]);
            return false;
        }
        if (i + 1 == argc) {
            std::fprintf(stderr, "all_pairs_shortest_paths: %s needs a value\n", argv[i]);
            return false;
        }
        const std::string_view value = argv[++i];
        if (nodes ? !parse_integer(value, options.nodes) || options.nodes < 1 || options.nodes > 1'000'000
                  : !parse_integer(value, options.seed)) {
            std::fprintf(stderr, "all_pairs_shortest_paths: bad value '%s' for %s%s\n", argv[i], argv[i - 1],
                         nodes ? " (a number of nodes from 1 to 1000000)" : " (a non-negative integer)");
            return false;
        }
    }
    return true;
}

// --- the graph ----------------------------------------------------------------------------------

struct Edge {
    std::int32_t to;
    float weight;
};

struct Graph {
    std::int64_t nodes = 0;
    std::int64_t edges = 0;
    std::vector<std::vector<Edge>> out;  // out[u]: the edges leaving u
};

// A random directed graph: each node gets 0 to 16 out-edges (8 on average; a node with none is a
// sink that reaches nothing) to distinct random other nodes, with weights uniform in [1, 100).
Graph random_graph(std::int64_t nodes, std::uint64_t seed) {
    Graph g;
    g.nodes = nodes;
    g.out.resize(static_cast<std::size_t>(nodes));
    if (nodes < 2) return g;
    std::mt19937_64 random(seed);
    std::uniform_int_distribution<std::int64_t> degree(0, kMaxOutDegree);
    std::uniform_int_distribution<std::int64_t> other(0, nodes - 2);
    std::uniform_real_distribution<float> weight(1.0f, 100.0f);
    for (std::int64_t u = 0; u < nodes; ++u) {
        auto& out = g.out[static_cast<std::size_t>(u)];
        const std::int64_t d = std::min(degree(random), nodes - 1);
        while (static_cast<std::int64_t>(out.size()) < d) {
            std::int64_t v = other(random);
            if (v >= u) ++v;  // any node but u itself
            const auto to = static_cast<std::int32_t>(v);
            if (std::none_of(out.begin(), out.end(), [to](const Edge& e) { return e.to == to; }))
                out.push_back({to, weight(random)});
        }
        g.edges += d;
    }
    return g;
}

// Row-major n x n: 0 on the diagonal, the weight of the edge from i to j, +inf where there is none.
std::vector<float> distance_matrix(const Graph& g) {
    const auto n = static_cast<std::size_t>(g.nodes);
    std::vector<float> d(n * n, kInfinity);
    for (std::size_t u = 0; u < n; ++u) {
        d[u * n + u] = 0.0f;
        for (const Edge& e : g.out[u]) d[u * n + static_cast<std::size_t>(e.to)] = e.weight;
    }
    return d;
}

// Shortest distances from every node, by Dijkstra's algorithm in double precision; +inf where a
// node cannot be reached.
std::vector<double> dijkstra_all(const Graph& g) {
    const auto n = static_cast<std::size_t>(g.nodes);
    std::vector<double> all(n * n, std::numeric_limits<double>::infinity());
    using Entry = std::pair<double, std::int32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    for (std::size_t source = 0; source < n; ++source) {
        double* dist = all.data() + source * n;
        dist[source] = 0.0;
        queue.push({0.0, static_cast<std::int32_t>(source)});
        while (!queue.empty()) {
            const auto [d, u] = queue.top();
            queue.pop();
            if (d > dist[u]) continue;  // a stale entry
            for (const Edge& e : g.out[static_cast<std::size_t>(u)]) {
                const double through_u = d + static_cast<double>(e.weight);
                if (through_u < dist[e.to]) {
                    dist[e.to] = through_u;
                    queue.push({through_u, e.to});
                }
            }
        }
    }
    return all;
}

// --- the squarings ------------------------------------------------------------------------------

// ceil(log2(n - 1)): enough squarings for paths of n - 1 edges.
int squarings_needed(std::int64_t nodes) {
    int s = 0;
    while ((std::int64_t{1} << s) < nodes - 1) ++s;
    return s;
}

struct Result {
    std::vector<float> distances;
    double first_ms = 0;      // GPU only: the first product, which loads (or compiles) the kernel
    double squarings_ms = 0;  // all squarings, from the first launch to the result being ready
};

// Waits for the GPU work before it on the default stream: a synchronous copy of one element.
void wait_for(const tropical::DeviceBuffer<float>& buffer) {
    float element = 0;
    buffer.download(std::span<float>(&element, 1));
}

Result squarings_on_gpu(const std::vector<float>& d, std::int64_t n, int squarings) {
    tropical::DeviceBuffer<float> ping{std::span<const float>(d)};
    tropical::DeviceBuffer<float> pong(d.size());
    Result r;

    // One untimed-as-squaring product first: the first call of a kernel in a process loads it from
    // the disk cache, or compiles it with NVRTC when the cache is cold. It leaves `ping` unchanged.
    auto start = Clock::now();
    tropical::gemm<tropical::MinPlus>(ping.row_major(n, n), ping.row_major(n, n), pong.row_major(n, n));
    wait_for(pong);
    r.first_ms = milliseconds_since(start);

    // D <- D (x) D, ping-ponging between the two buffers. The launches are asynchronous; the clock
    // stops once the last result is ready.
    const tropical::DeviceBuffer<float>* current = &ping;
    const tropical::DeviceBuffer<float>* next = &pong;
    start = Clock::now();
    for (int s = 0; s < squarings; ++s) {
        tropical::gemm<tropical::MinPlus>(current->row_major(n, n), current->row_major(n, n), next->row_major(n, n));
        std::swap(current, next);
    }
    wait_for(*current);
    r.squarings_ms = milliseconds_since(start);
    r.distances = current->to_host();
    return r;
}

// The same squarings in host memory: each call returns with its result written.
Result squarings_on_cpu(const std::vector<float>& d, std::int64_t n, int squarings) {
    std::vector<float> current = d, next(d.size());
    Result r;
    const auto start = Clock::now();
    for (int s = 0; s < squarings; ++s) {
        tropical::host::gemm<tropical::MinPlus>(tropical::row_major<const float>(current.data(), n, n),
                                                tropical::row_major<const float>(current.data(), n, n),
                                                tropical::row_major(next.data(), n, n));
        std::swap(current, next);
    }
    r.squarings_ms = milliseconds_since(start);
    r.distances = std::move(current);
    return r;
}

// --- the check ----------------------------------------------------------------------------------

// Float sums taken in another order round differently, so finite distances are compared with a
// relative tolerance; unreachable pairs must be exactly +inf.
bool check(const std::vector<float>& got, const std::vector<double>& expected, std::int64_t n) {
    std::int64_t mismatches = 0, unreachable = 0;
    double worst = 0;
    for (std::size_t idx = 0; idx < expected.size(); ++idx) {
        const double want = expected[idx];
        const float have = got[idx];
        bool ok = false;
        if (std::isinf(want)) {
            ++unreachable;
            ok = have == kInfinity;
        } else {
            const double difference = std::abs(static_cast<double>(have) - want);
            ok = difference <= kRelativeTolerance * std::max(want, 1.0);  // false for NaN and inf
            if (ok) worst = std::max(worst, difference / std::max(want, 1.0));
        }
        if (!ok && ++mismatches <= 10)
            std::printf("  MISMATCH at (%lld, %lld): min-plus gives %.9g, Dijkstra %.9g\n",
                        static_cast<long long>(idx / static_cast<std::size_t>(n)),
                        static_cast<long long>(idx % static_cast<std::size_t>(n)), static_cast<double>(have), want);
    }
    if (mismatches) {
        std::printf("Check FAILED: %lld of %zu distances differ from Dijkstra\n", static_cast<long long>(mismatches),
                    expected.size());
        return false;
    }
    std::printf("Check passed: all %zu distances agree with Dijkstra (largest relative difference %.2g",
                expected.size(), worst);
    if (unreachable) std::printf("; %lld unreachable pairs are +inf", static_cast<long long>(unreachable));
    std::printf(")\n");
    return true;
}

// The first line of an error message, without a closing period.
std::string first_line(std::string_view message) {
    std::string line(message.substr(0, message.find('\n')));
    while (!line.empty() && (line.back() == '.' || line.back() == ' ')) line.pop_back();
    return line;
}

int run(const Options& options) {
    // The first use of the GPU: without a driver or a device, fall back to the CPU.
    bool gpu = false;
    try {
        const tropical::CudaContext& context = tropical::CudaContext::for_device(0);
        gpu = true;
        std::printf("GPU 0: %s (sm_%d, %d multiprocessors)\n", context.name().c_str(), context.arch(),
                    context.multiprocessor_count());
    } catch (const tropical::NoDriver& e) {
        std::printf("No CUDA GPU available (%s): squaring on the CPU instead\n", first_line(e.what()).c_str());
    } catch (const tropical::NoDevice& e) {
        std::printf("No CUDA GPU available (%s): squaring on the CPU instead\n", first_line(e.what()).c_str());
    }

    const std::int64_t n = options.nodes ? options.nodes : (gpu ? kDefaultNodesGpu : kDefaultNodesCpu);
    const Graph graph = random_graph(n, options.seed);
    const int squarings = squarings_needed(n);
    std::printf("Random directed graph: %lld nodes, %lld edges, weights in [1, 100), seed %llu\n",
                static_cast<long long>(n), static_cast<long long>(graph.edges),
                static_cast<unsigned long long>(options.seed));

    const std::vector<float> d = distance_matrix(graph);
    const Result r = gpu ? squarings_on_gpu(d, n, squarings) : squarings_on_cpu(d, n, squarings);
    const double terms = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    if (gpu)
        std::printf("  first product (loads the kernel, or compiles it if the cache is cold): %.1f ms\n", r.first_ms);
    const std::string device = gpu ? std::string("GPU")
                                   : "CPU (" + std::string(tropical::host::simd_target()) + ", " +
                                         std::to_string(tropical::host::default_threads()) + " threads)";
    std::printf("  %d min-plus squaring%s D <- D (x) D of %lld x %lld on the %s: %.3f ms", squarings,
                squarings == 1 ? "" : "s", static_cast<long long>(n), static_cast<long long>(n), device.c_str(),
                r.squarings_ms);
    if (squarings > 0 && r.squarings_ms > 0) {
        // 2 operations (one (x), one (+)) per term, n^3 terms per squaring.
        const double each_ms = r.squarings_ms / squarings;
        const double ops_per_second = 2 * terms / (each_ms * 1e-3);
        if (gpu) std::printf(", %.3f ms each, %.2f tropical Tops", each_ms, ops_per_second * 1e-12);
        else std::printf(", %.3f ms each, %.2f tropical Gops", each_ms, ops_per_second * 1e-9);
    }
    std::printf("\n");

    const auto start = Clock::now();
    const std::vector<double> expected = dijkstra_all(graph);
    std::printf("  Dijkstra from all %lld nodes on the CPU: %.1f ms\n", static_cast<long long>(n),
                milliseconds_since(start));
    return check(r.distances, expected, n) ? 0 : 1;
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
        std::fprintf(stderr, "all_pairs_shortest_paths: %s: %s\n", tropical::to_string(e.status()), e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "all_pairs_shortest_paths: %s\n", e.what());
    }
    return 1;
}
