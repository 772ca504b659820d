// tropical::contract on the GPU against the brute-force loop (support/contract_cases.hpp): the
// contractions that run as one batched product on views (batches, transposed and padded operands,
// outer products, diagonals, empty ones), every semiring, f32 and i64.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include <tropical/contract.hpp>
#include <tropical/device_buffer.hpp>
#include "support/contract_cases.hpp"

using namespace tropical;
using namespace tropical::testing;

namespace {

struct Case {
    const char* name;
    TensorSpec a, b, c;
};

template <class T>
void check_on_gpu() {
    const Case all[] = {
        {"product", spec("ik", {33, 40}), spec("kj", {40, 17}), spec("ij", {33, 17})},
        {"batch inside", spec("ibk", {3, 5, 4}), spec("kbj", {4, 5, 6}), spec("bji", {5, 6, 3})},
        {"transposed", spec("ik", {7, 9}, {1, 0}), spec("kj", {9, 5}, {1, 0}), spec("ji", {5, 7})},
        {"padded", spec("ik", {6, 4}, {}, 3), spec("kj", {4, 5}, {}, 2), spec("ij", {6, 5}, {}, 1)},
        {"outer", spec("i", {8}), spec("j", {3}), spec("ij", {8, 3})},
        {"diagonal", spec("iik", {4, 4, 3}), spec("kj", {3, 2}), spec("ij", {4, 2})},
        {"empty contraction", spec("ik", {3, 0}), spec("kj", {0, 2}), spec("ij", {3, 2})},
    };
    std::mt19937 rng(11);
    for (Semiring s : all_semirings) {
        if (!supports(s, dtype_of<T>())) continue;
        for (const Case& k : all) {
            const auto a = random_values<T>(k.a.span, s, rng), b = random_values<T>(k.b.span, s, rng);
            DeviceBuffer<T> da{std::span<const T>(a)}, db{std::span<const T>(b)};
            std::vector<T> fill(static_cast<std::size_t>(k.c.span), T(99));
            DeviceBuffer<T> dc{std::span<const T>(fill)};
            const TensorView<const T> va = view_of<const T>(k.a, da.data()), vb = view_of<const T>(k.b, db.data());
            const TensorView<T> vc = view_of<T>(k.c, dc.data());
            detail::contract(s, dtype_of<T>(), detail::tensor_ref(va), detail::tensor_ref(vb), detail::tensor_ref(vc),
                             {});
            const std::vector<T> got = dc.to_host(), want = brute_contract<T>(s, k.a, a, k.b, b, k.c);
            for (std::size_t n = 0; n < want.size(); ++n) {
                std::int64_t offset = 0, rest = static_cast<std::int64_t>(n);
                for (std::size_t d = k.c.sizes.size(); d-- > 0;)
                    offset += (rest % k.c.sizes[d]) * k.c.strides[d], rest /= k.c.sizes[d];
                ASSERT_EQ(got[static_cast<std::size_t>(offset)], want[n]) << k.name << ", " << to_string(s);
            }
        }
    }
}

TEST(GpuContract, MatchesBruteForceF32) { check_on_gpu<float>(); }
TEST(GpuContract, MatchesBruteForceI64) { check_on_gpu<std::int64_t>(); }

TEST(GpuContract, TheTemplateApi) {
    const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
    DeviceBuffer<float> da{std::span<const float>(a)}, db{std::span<const float>(b)}, dc{4};
    contract<MaxPlus>(dense_tensor<const float>(da.data(), {2, 2}, {0, 1}),
                      dense_tensor<const float>(db.data(), {2, 2}, {1, 2}), dense_tensor(dc.data(), {2, 2}, {0, 2}));
    EXPECT_EQ(dc.to_host(), (std::vector<float>{9, 10, 11, 12}));
}

}  // namespace
