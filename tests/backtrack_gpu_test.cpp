// The backtrack on the GPU (kernels/backtrack.cuh): planted chains in every geometry (their walks cut
// by indices out of range at random steps; the paths' padding poisoned and left alone), no steps, a
// row per thread over many blocks; and a real chain: T products with argmax of a Viterbi decoder,
// the last states from one more product with argmax, the walk on the GPU equal to the host's over
// the same tables, and every path's score, summed along it, its best score; and the walk captured
// into a CUDA graph on a stream, replayed on the capture's chain and on a new one.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include <tropical/device_buffer.hpp>
#include <tropical/gemm.hpp>
#include <tropical/host.hpp>
#include "support/backtrack_cases.hpp"
#include "support/gpu.hpp"
#include "support/stream_graph.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

// The walk of chain c on the GPU: c.path as the kernel leaves it (poisoned before).
std::vector<std::int32_t> walk_on_gpu(const Chain& c) {
    const DeviceBuffer<std::int32_t> back{std::span<const std::int32_t>(c.back)};
    const DeviceBuffer<std::int32_t> last{std::span<const std::int32_t>(c.last)};
    const DeviceBuffer<std::int32_t> path{std::span<const std::int32_t>(c.path)};
    backtrack(c.back_view(back.data()), c.steps, c.last_view(last.data()), c.path_view(path.data()));
    return path.to_host();
}

TEST(BacktrackGpu, WalksThePlantedPathsInEveryGeometry) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    struct ChainShape {
        std::int64_t rows, states, steps;
    };
    for (const ChainGeometry& g : chain_geometries())
        for (const ChainShape s :
             {ChainShape{1, 1, 0}, {1, 7, 1}, {3, 5, 9}, {129, 33, 40}, {5, 0, 3}, {64, 256, 512}}) {
            const Chain c = planted_chain(rng, s.rows, s.states, s.steps, g, 0.3);
            EXPECT_EQ(walk_on_gpu(c), c.expected)
                << "B=" << s.rows << " S=" << s.states << " T=" << s.steps << "; " << describe(g);
        }
}

// Captured on a stream (with and without the device hint): capturing runs nothing, and each replay
// walks the chain that the buffers hold then.
TEST(BacktrackGpu, ACapturedWalkReplaysOnNewChains) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    for (const int device_hint : {-1, 0}) {
        SCOPED_TRACE("device hint " + std::to_string(device_hint));
        Chain c = planted_chain(rng, 50, 20, 30, chain_geometries()[1]);
        DeviceBuffer<std::int32_t> back{std::span<const std::int32_t>(c.back)};
        DeviceBuffer<std::int32_t> last{std::span<const std::int32_t>(c.last)};
        DeviceBuffer<std::int32_t> path{std::span<const std::int32_t>(c.path)};
        const detail::OwnedStream stream;
        const GemmOptions options{stream.get(), false, device_hint};
        const detail::CapturedGraph graph(stream, [&] {
            backtrack(c.back_view(back.data()), c.steps, c.last_view(last.data()), c.path_view(path.data()), options);
        });
        EXPECT_EQ(path.to_host(), c.path) << "capturing ran the walk";
        for (int round = 0; round < 2; ++round) {
            SCOPED_TRACE(round == 0 ? "first replay" : "second replay, on a new chain");
            if (round == 1) {
                c = planted_chain(rng, 50, 20, 30, chain_geometries()[1]);
                back.upload(c.back), last.upload(c.last), path.upload(c.path);
            }
            graph.launch(stream);
            stream.synchronize();
            EXPECT_EQ(path.to_host(), c.expected);
        }
    }
}

// More rows than the launch has threads (16 blocks of 128 per multiprocessor): the threads stride.
TEST(BacktrackGpu, RowsBeyondOneThreadEach) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    const Chain c = planted_chain(rng, 600'000, 3, 2, {}, 0.1);
    EXPECT_EQ(walk_on_gpu(c), c.expected);
}

// A Viterbi decoder: v_{t+1} = v_t (x) W with back[t] its argmax; the last states the argmax of
// v_T (x) a column of MaxPlus's one (0). The GPU's walk equals the host's over the same tables,
// and each path's score along it is its row's best.
TEST(BacktrackGpu, DecodesAViterbiChainOfProductsWithArgmax) {
    TROPICAL_REQUIRE_GPU();
    TROPICAL_TEST_RNG(rng);
    constexpr std::int64_t B = 8, S = 40, T = 30;
    std::vector<float> start(B * S), w(S * S);
    for (float& x : start) x = static_cast<float>(rng.real(-8, 0));
    for (float& x : w) x = static_cast<float>(rng.real(-8, 0));
    const DeviceBuffer<float> dw{std::span<const float>(w)}, v0{std::span<const float>(start)};
    const DeviceBuffer<float> ping(B * S), pong(B * S), best(B),
        ones_column{std::span<const float>(std::vector<float>(S, 0.0f))};
    const DeviceBuffer<std::int32_t> back(T * B * S), last(B);
    DeviceBuffer<std::int32_t> path(B * (T + 1));
    path.fill_bytes(0xff);
    for (std::int64_t t = 0; t < T; ++t) {
        const float* in = t == 0 ? v0.data() : (t % 2 ? ping.data() : pong.data());
        float* out = t % 2 ? pong.data() : ping.data();
        gemm_with_argmax<MaxPlus>(row_major(in, B, S), dw.row_major(S, S), row_major(out, B, S),
                                  row_major(back.data() + t * B * S, B, S));
    }
    const DeviceBuffer<float>& final_scores = T % 2 ? ping : pong;
    gemm_with_argmax<MaxPlus>(final_scores.row_major(B, S), ones_column.row_major(S, 1), best.row_major(B, 1),
                              last.row_major(B, 1));
    backtrack(batched(MatrixView<const std::int32_t>(back.row_major(B, S)), B * S), T, last.row_major(B, 1),
              path.row_major(B, T + 1));

    const std::vector<std::int32_t> tables = back.to_host(), ends = last.to_host(), gpu_paths = path.to_host();
    std::vector<std::int32_t> host_paths(B * (T + 1), -2);
    host::backtrack(batched(row_major(tables.data(), B, S), B * S), T, row_major(ends.data(), B, 1),
                    row_major(host_paths.data(), B, T + 1));
    EXPECT_EQ(gpu_paths, host_paths);
    const std::vector<float> scores = best.to_host();
    for (std::int64_t b = 0; b < B; ++b) {
        const std::int32_t* p = gpu_paths.data() + b * (T + 1);
        ASSERT_GE(p[0], 0) << "row " << b;
        float along = start[b * S + p[0]];
        for (std::int64_t t = 0; t < T; ++t) along += w[p[t] * S + p[t + 1]];
        EXPECT_EQ(along, scores[b]) << "row " << b;
    }
}

}  // namespace
