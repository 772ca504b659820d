// tropical::contract on the GPU against the brute-force loop (support/contract_cases.hpp): the
// contractions that run as one batched product on views (batches, transposed and padded operands,
// outer products, diagonals, empty ones), every semiring, f32 and i64; the argmax form likewise
// against the loop's argmax, with C and the argmax poisoned first, shapes that reach the tiled,
// batched and small argmax kernels, and what the GPU path refuses for want of a view.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
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
        if (is_counting(s)) continue;  // pairs, not scalar tensors: refused (tests/counting_test.cpp)
        if (!supports(s, dtype_of<T>())) continue;
        for (const Case& k : all) {
            const auto a = random_values<T>(k.a.span, s, rng), b = random_values<T>(k.b.span, s, rng);
            DeviceBuffer<T> da{std::span<const T>(a)}, db{std::span<const T>(b)};
            std::vector<T> fill(static_cast<std::size_t>(k.c.span), T(99));
            DeviceBuffer<T> dc{std::span<const T>(fill)};
            const TensorView<const T> va = view_of<const T>(k.a, da.data()), vb = view_of<const T>(k.b, db.data());
            const TensorView<T> vc = view_of<T>(k.c, dc.data());
            detail::contract(s, dtype_of<T>(), detail::tensor_ref(va), detail::tensor_ref(vb), detail::tensor_ref(vc),
                             nullptr, {});
            const std::vector<T> got = dc.to_host(), want = brute_contract<T>(s, k.a, a, k.b, b, k.c);
            for (std::size_t n = 0; n < want.size(); ++n) {
                std::int64_t offset = 0, rest = static_cast<std::int64_t>(n);
                for (std::size_t d = k.c.sizes.size(); d-- > 0;)
                    offset += (rest % k.c.sizes[d]) * k.c.strides[d], rest /= k.c.sizes[d];
                ASSERT_TRUE(same_result(s, got[static_cast<std::size_t>(offset)], want[n]))
                    << k.name << ", " << to_string(s) << ": " << got[static_cast<std::size_t>(offset)] << " against "
                    << want[n];
            }
        }
    }
}

TEST(GpuContract, MatchesBruteForceF32) { check_on_gpu<float>(); }
TEST(GpuContract, MatchesBruteForceI64) { check_on_gpu<std::int64_t>(); }
TEST(GpuContract, MatchesBruteForceOrAnd) { check_on_gpu<std::uint8_t>(); }

template <class T>
void check_argmax_on_gpu() {
    struct ArgmaxCase {
        const char* name;
        TensorSpec a, b, c, argmax;
        bool refused = false;  // no view without a copy, which the GPU path does not make
    };
    const ArgmaxCase all[] = {
        {"product", spec("ik", {67, 130}), spec("kj", {130, 45}), spec("ij", {67, 45}), spec("ij", {67, 45})},
        // B holds (k, l) in A's order: the order the argmax follows, so both merge without a copy (against
        // it, the GPU path refuses: TheArgmaxTemplateApiAndItsRefusal).
        {"two contracted, A's order", spec("ikl", {9, 5, 7}), spec("klj", {5, 7, 11}), spec("ij", {9, 11}),
         spec("ji", {11, 9})},
        {"batch inside, argmax transposed", spec("ibk", {3, 5, 4}), spec("kbj", {4, 5, 6}), spec("bij", {5, 3, 6}),
         spec("bji", {5, 6, 3})},
        {"many small batches", spec("bik", {300, 3, 5}), spec("bkj", {300, 5, 2}), spec("bij", {300, 3, 2}),
         spec("bij", {300, 3, 2})},
        {"transposed", spec("ik", {7, 9}, {1, 0}), spec("kj", {9, 5}, {1, 0}), spec("ji", {5, 7}), spec("ij", {7, 5})},
        {"padded", spec("ik", {6, 4}, {}, 3), spec("kj", {4, 5}, {}, 2), spec("ij", {6, 5}, {}, 1),
         spec("ij", {6, 5}, {}, 2)},
        // The diagonal steps by 7 and i by 3: neither is contiguous, so no matrix view of A exists.
        {"diagonal of A", spec("kik", {3, 2, 3}), spec("kj", {3, 4}), spec("ij", {2, 4}), spec("ij", {2, 4}), true},
        {"outer", spec("i", {8}), spec("j", {3}), spec("ij", {8, 3}), spec("ij", {8, 3})},
        {"empty contraction", spec("ik", {3, 0}), spec("kj", {0, 2}), spec("ij", {3, 2}), spec("ij", {3, 2})},
    };
    std::mt19937 rng(23);
    for (Semiring s : all_semirings) {
        if (is_counting(s)) continue;  // pairs, not scalar tensors: refused (tests/counting_test.cpp)
        if (!supports(s, dtype_of<T>()) || !info(s).selects()) continue;  // (LogPlus has no argmax)
        for (const ArgmaxCase& k : all) {
            const auto a = random_values<T>(k.a.span, s, rng), b = random_values<T>(k.b.span, s, rng);
            DeviceBuffer<T> da{std::span<const T>(a)}, db{std::span<const T>(b)};
            const std::vector<T> fill(static_cast<std::size_t>(k.c.span), T(99));
            const std::vector<std::int32_t> poison(static_cast<std::size_t>(k.argmax.span), 12345);
            DeviceBuffer<T> dc{std::span<const T>(fill)};
            DeviceBuffer<std::int32_t> dm{std::span<const std::int32_t>(poison)};
            const TensorView<const T> va = view_of<const T>(k.a, da.data()), vb = view_of<const T>(k.b, db.data());
            const TensorView<T> vc = view_of<T>(k.c, dc.data());
            const TensorView<std::int32_t> vm = view_of<std::int32_t>(k.argmax, dm.data());
            const detail::TensorRef indices = detail::tensor_ref(vm);
            auto run = [&] {
                detail::contract(s, dtype_of<T>(), detail::tensor_ref(va), detail::tensor_ref(vb),
                                 detail::tensor_ref(vc), &indices, {});
            };
            if (k.refused) {
                EXPECT_THROW(run(), Unsupported) << k.name;
                EXPECT_EQ(dc.to_host(), fill) << k.name << ": C written by a refused call";
                EXPECT_EQ(dm.to_host(), poison) << k.name << ": argmax written by a refused call";
                continue;
            }
            run();
            const std::vector<T> got = dc.to_host();
            const std::vector<std::int32_t> got_argmax = dm.to_host();
            const auto [want, want_argmax] = brute_contract_argmax<T>(s, k.a, a, k.b, b, k.c);
            for (std::size_t n = 0; n < want.size(); ++n) {
                std::int64_t offset = 0, at_m = 0, rest = static_cast<std::int64_t>(n);
                for (std::size_t d = k.c.sizes.size(); d-- > 0;) {
                    const std::int64_t i = rest % k.c.sizes[d];
                    rest /= k.c.sizes[d];
                    offset += i * k.c.strides[d];
                    at_m += i * k.argmax.strides[k.argmax.labels.find(k.c.labels[d])];
                }
                ASSERT_EQ(got[static_cast<std::size_t>(offset)], want[n]) << k.name << ", " << to_string(s);
                ASSERT_EQ(got_argmax[static_cast<std::size_t>(at_m)], want_argmax[n])
                    << k.name << ", " << to_string(s) << ", element " << n;
            }
        }
    }
}

TEST(GpuContract, ArgmaxMatchesBruteForceF32) { check_argmax_on_gpu<float>(); }
TEST(GpuContract, ArgmaxMatchesBruteForceF64) { check_argmax_on_gpu<double>(); }
TEST(GpuContract, ArgmaxMatchesBruteForceI32) { check_argmax_on_gpu<std::int32_t>(); }
TEST(GpuContract, ArgmaxMatchesBruteForceOrAnd) { check_argmax_on_gpu<std::uint8_t>(); }

TEST(GpuContract, TheArgmaxTemplateApiAndItsRefusal) {
    const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
    DeviceBuffer<float> da{std::span<const float>(a)}, db{std::span<const float>(b)}, dc{4};
    DeviceBuffer<std::int32_t> dm{4};
    contract_with_argmax<MaxPlus>(dense_tensor<const float>(da.data(), {2, 2}, {0, 1}),
                                  dense_tensor<const float>(db.data(), {2, 2}, {1, 2}),
                                  dense_tensor(dc.data(), {2, 2}, {0, 2}), dense_tensor(dm.data(), {2, 2}, {0, 2}));
    EXPECT_EQ(dc.to_host(), (std::vector<float>{9, 10, 11, 12}));
    EXPECT_EQ(dm.to_host(), (std::vector<std::int32_t>{1, 1, 1, 1}));
    // A lists its contracted labels (1, 3) against their order in memory: no view, no buffer.
    DeviceBuffer<float> big{16};
    TensorView<const float> va = dense_tensor<const float>(big.data(), {2, 2, 2}, {0, 3, 1});
    std::swap(va.labels[1], va.labels[2]), std::swap(va.sizes[1], va.sizes[2]), std::swap(va.strides[1], va.strides[2]);
    EXPECT_THROW(
        contract_with_argmax<MaxPlus>(va, dense_tensor<const float>(big.data(), {2, 2, 2}, {1, 3, 2}),
                                      dense_tensor(dc.data(), {2, 2}, {0, 2}), dense_tensor(dm.data(), {2, 2}, {0, 2})),
        Unsupported);
}

TEST(GpuContract, TheTemplateApi) {
    const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
    DeviceBuffer<float> da{std::span<const float>(a)}, db{std::span<const float>(b)}, dc{4};
    contract<MaxPlus>(dense_tensor<const float>(da.data(), {2, 2}, {0, 1}),
                      dense_tensor<const float>(db.data(), {2, 2}, {1, 2}), dense_tensor(dc.data(), {2, 2}, {0, 2}));
    EXPECT_EQ(dc.to_host(), (std::vector<float>{9, 10, 11, 12}));
}

}  // namespace
