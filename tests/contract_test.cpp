// tropical::host::contract and the C ABI's tropical_host_contract against a brute-force loop over
// every label assignment (support/contract_cases.hpp): products, batches, outer products,
// diagonals, labels one input alone holds, transposed, padded and broadcast operands, outputs whose
// strides need a buffer; every semiring and type. Also the checks, and what the GPU path refuses
// before it touches a GPU. The argmax forms against the brute-force loop's argmax (the flat index
// over the contracted labels in A's order), with argmax tensors of their own strides.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/contract.hpp>
#include <tropical/error.hpp>
#include "support/contract_cases.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

struct Case {
    const char* name;
    TensorSpec a, b, c;
};

std::vector<Case> cases() {
    return {
        {"product", spec("ik", {3, 4}), spec("kj", {4, 5}), spec("ij", {3, 5})},
        {"batched", spec("bik", {2, 3, 4}), spec("bkj", {2, 4, 5}), spec("bij", {2, 3, 5})},
        {"batch inside", spec("ibk", {3, 2, 4}), spec("kbj", {4, 2, 5}), spec("jbi", {5, 2, 3})},
        {"two contracted", spec("ikl", {3, 2, 4}), spec("lkj", {4, 2, 3}), spec("ij", {3, 3})},
        {"transposed inputs", spec("ik", {3, 4}, {1, 0}), spec("kj", {4, 5}, {1, 0}), spec("ji", {5, 3})},
        {"padded rows", spec("ik", {3, 4}, {}, 3), spec("kj", {4, 5}, {}, 2), spec("ij", {3, 5}, {}, 1)},
        {"outer product", spec("i", {3}), spec("j", {4}), spec("ij", {3, 4})},
        {"elementwise", spec("ij", {2, 3}), spec("ij", {2, 3}), spec("ij", {2, 3})},
        {"to a scalar", spec("ij", {2, 3}), spec("ji", {3, 2}), spec("", {})},
        {"diagonal", spec("iik", {3, 3, 2}), spec("kj", {2, 4}), spec("ij", {3, 4})},
        {"a label of A alone", spec("ikx", {3, 4, 2}), spec("kj", {4, 5}), spec("ij", {3, 5})},
        {"labels of both alone", spec("xik", {2, 3, 4}), spec("kjy", {4, 5, 3}), spec("ij", {3, 5})},
        {"no view: interleaved", spec("bik", {2, 3, 4}, {1, 0, 2}), spec("bkj", {2, 4, 5}, {2, 0, 1}),
         spec("bij", {2, 3, 5}, {1, 2, 0})},
        {"no view: contraction split in memory", spec("ikl", {3, 2, 4}, {1, 0, 2}), spec("lkj", {4, 2, 3}),
         spec("ij", {3, 3})},
        {"empty contraction", spec("ik", {3, 0}), spec("kj", {0, 2}), spec("ij", {3, 2})},
        {"empty output", spec("ik", {0, 2}), spec("kj", {2, 3}), spec("ij", {0, 3})},
    };
}

tropical_tensor descriptor(const TensorSpec& s, const void* data, std::vector<std::int32_t>& labels) {
    labels.assign(s.labels.begin(), s.labels.end());
    return {data, static_cast<std::int32_t>(s.sizes.size()), s.sizes.data(), s.strides.data(), labels.data()};
}

template <class T>
void check_every_case(tropical_dtype dtype) {
    std::mt19937 rng(7);
    for (Semiring s : all_semirings) {
        if (is_counting(s)) continue;  // pairs, not scalar tensors: tests/counting_contract_test.cpp
        if (!supports(s, dtype_of<T>())) continue;
        for (const Case& k : cases()) {
            const auto a = random_values<T>(k.a.span, s, rng), b = random_values<T>(k.b.span, s, rng);
            std::vector<T> c(static_cast<std::size_t>(k.c.span), T(99));
            std::vector<std::int32_t> la, lb, lc;
            const tropical_tensor ta = descriptor(k.a, a.data(), la), tb = descriptor(k.b, b.data(), lb),
                                  tc = descriptor(k.c, c.data(), lc);
            const tropical_host_options one_thread{0, 1};
            ASSERT_EQ(tropical_host_contract(static_cast<tropical_semiring>(s), dtype, &ta, &tb, &tc, &one_thread),
                      TROPICAL_SUCCESS)
                << k.name << ": " << tropical_last_error_message();
            const std::vector<T> want = brute_contract<T>(s, k.a, a, k.b, b, k.c);
            // Read C through its strides, in row-major order of its labels.
            std::size_t n = 0;
            std::vector<std::int64_t> index(k.c.sizes.size(), 0);
            for (; n < want.size(); ++n) {
                std::int64_t offset = 0, rest = static_cast<std::int64_t>(n);
                for (std::size_t d = k.c.sizes.size(); d-- > 0;)
                    offset += (rest % k.c.sizes[d]) * k.c.strides[d], rest /= k.c.sizes[d];
                ASSERT_TRUE(same_result(s, c[static_cast<std::size_t>(offset)], want[n]))
                    << c[static_cast<std::size_t>(offset)] << " against " << want[n] << ": " << k.name << ", "
                    << to_string(s) << ", " << to_string(dtype_of<T>()) << ", element " << n;
            }
        }
    }
}

TEST(HostContract, EveryCaseSemiringAndTypeMatchesBruteForce) {
    check_every_case<float>(TROPICAL_F32);
    check_every_case<double>(TROPICAL_F64);
    check_every_case<std::int32_t>(TROPICAL_I32);
    check_every_case<std::int64_t>(TROPICAL_I64);
    check_every_case<std::uint8_t>(TROPICAL_U8);  // OrAnd
}

// C's position of dense row-major element n (its labels' order), through c's strides.
std::size_t strided_offset(const TensorSpec& t, std::size_t n) {
    std::int64_t offset = 0, rest = static_cast<std::int64_t>(n);
    for (std::size_t d = t.sizes.size(); d-- > 0;) offset += (rest % t.sizes[d]) * t.strides[d], rest /= t.sizes[d];
    return static_cast<std::size_t>(offset);
}

struct ArgmaxCase {
    const char* name;
    TensorSpec a, b, c, argmax;
};

std::vector<ArgmaxCase> argmax_cases() {
    return {
        {"product", spec("ik", {3, 7}), spec("kj", {7, 5}), spec("ij", {3, 5}), spec("ij", {3, 5})},
        {"batch inside", spec("ibk", {3, 2, 4}), spec("kbj", {4, 2, 5}), spec("jbi", {5, 2, 3}),
         spec("jbi", {5, 2, 3})},
        {"two contracted, A's order", spec("ikl", {3, 2, 4}), spec("lkj", {4, 2, 3}), spec("ij", {3, 3}),
         spec("ij", {3, 3})},
        // A lists l before k but holds k outermost: the views would merge (k, l); the host copies.
        {"two contracted, listed against memory", spec("ilk", {3, 4, 2}, {0, 2, 1}), spec("klj", {2, 4, 3}),
         spec("ij", {3, 3}), spec("ij", {3, 3})},
        {"three contracted, B interleaved", spec("aibc", {2, 3, 3, 2}), spec("cjab", {2, 4, 2, 3}, {3, 0, 2, 1}),
         spec("ij", {3, 4}), spec("ji", {4, 3})},
        {"transposed inputs, argmax transposed", spec("ik", {3, 4}, {1, 0}), spec("kj", {4, 5}, {1, 0}),
         spec("ij", {3, 5}), spec("ij", {3, 5}, {1, 0})},
        {"padded", spec("ik", {3, 4}, {}, 3), spec("kj", {4, 5}, {}, 2), spec("ij", {3, 5}, {}, 1),
         spec("ij", {3, 5}, {}, 4)},
        {"batched, argmax batch innermost", spec("bik", {2, 3, 4}), spec("bkj", {2, 4, 5}), spec("bij", {2, 3, 5}),
         spec("bij", {2, 3, 5}, {1, 2, 0})},
        {"outer product", spec("i", {3}), spec("j", {4}), spec("ij", {3, 4}), spec("ij", {3, 4})},
        {"to a scalar", spec("ij", {2, 3}), spec("ji", {3, 2}), spec("", {}), spec("", {})},
        {"diagonal of A", spec("kik", {3, 2, 3}), spec("kj", {3, 4}), spec("ij", {2, 4}), spec("ij", {2, 4})},
        {"empty contraction", spec("ik", {3, 0}), spec("kj", {0, 2}), spec("ij", {3, 2}), spec("ij", {3, 2})},
        {"empty output", spec("ik", {0, 2}), spec("kj", {2, 3}), spec("ij", {0, 3}), spec("ij", {0, 3})},
    };
}

template <class T>
void check_every_argmax_case(tropical_dtype dtype) {
    std::mt19937 rng(17);
    for (Semiring s : all_semirings) {
        if (is_counting(s)) continue;  // pairs, not scalar tensors: tests/counting_contract_test.cpp
        if (!supports(s, dtype_of<T>()) || !info(s).selects()) continue;  // (LogPlus has no argmax)
        for (const ArgmaxCase& k : argmax_cases()) {
            const auto a = random_values<T>(k.a.span, s, rng), b = random_values<T>(k.b.span, s, rng);
            std::vector<T> c(static_cast<std::size_t>(k.c.span), T(99));
            std::vector<std::int32_t> m(static_cast<std::size_t>(k.argmax.span), 12345);
            std::vector<std::int32_t> la, lb, lc, lm;
            const tropical_tensor ta = descriptor(k.a, a.data(), la), tb = descriptor(k.b, b.data(), lb),
                                  tc = descriptor(k.c, c.data(), lc), tm = descriptor(k.argmax, m.data(), lm);
            const tropical_host_options one_thread{0, 1};
            ASSERT_EQ(tropical_host_contract_argmax(static_cast<tropical_semiring>(s), dtype, &ta, &tb, &tc, &tm,
                                                    &one_thread),
                      TROPICAL_SUCCESS)
                << k.name << ": " << tropical_last_error_message();
            const auto [want, want_argmax] = brute_contract_argmax<T>(s, k.a, a, k.b, b, k.c);
            // The argmax tensor lists C's labels, maybe in another order: element n of C (dense,
            // its labels' order) is the argmax's element at the same label values.
            for (std::size_t n = 0; n < want.size(); ++n) {
                std::int64_t rest = static_cast<std::int64_t>(n), at_m = 0;
                for (std::size_t d = k.c.sizes.size(); d-- > 0;) {
                    const std::int64_t i = rest % k.c.sizes[d];
                    rest /= k.c.sizes[d];
                    at_m += i * k.argmax.strides[k.argmax.labels.find(k.c.labels[d])];
                }
                const std::string where = std::string(k.name) + ", " + std::string(to_string(s)) + ", " +
                                          std::string(to_string(dtype_of<T>())) + ", element " + std::to_string(n);
                ASSERT_EQ(c[strided_offset(k.c, n)], want[n]) << where;
                ASSERT_EQ(m[static_cast<std::size_t>(at_m)], want_argmax[n]) << where;
            }
        }
    }
}

TEST(HostContractArgmax, EveryCaseSemiringAndTypeMatchesBruteForce) {
    check_every_argmax_case<float>(TROPICAL_F32);
    check_every_argmax_case<double>(TROPICAL_F64);
    check_every_argmax_case<std::int32_t>(TROPICAL_I32);
    check_every_argmax_case<std::int64_t>(TROPICAL_I64);
    check_every_argmax_case<std::uint8_t>(TROPICAL_U8);  // OrAnd
}

TEST(HostContractArgmax, TiesTakeTheSmallestIndexAndNoTermGivesMinusOne) {
    // Every term of row 0 is 5 (a tie over all 6 of (k, l)); row 1 is all -inf: no term beats the zero.
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> a = {2, 2, 2, 2, 2, 2, -inf, -inf, -inf, -inf, -inf, -inf}, b(6, 3.0f), c(2, 0.0f);
    std::vector<std::int32_t> m(2, 77);
    host::contract_with_argmax<MaxPlus>(dense_tensor<const float>(a.data(), {2, 3, 2}, {'i', 'k', 'l'}),
                                        dense_tensor<const float>(b.data(), {2, 3}, {'l', 'k'}),
                                        dense_tensor(c.data(), {2}, {'i'}), dense_tensor(m.data(), {2}, {'i'}));
    EXPECT_EQ(c, (std::vector<float>{5, -inf}));
    EXPECT_EQ(m, (std::vector<std::int32_t>{0, -1}));
    // The maximum at k = 2, l = 0: flat index 2 * 2 + 0 in A's order (k, l), though B lists l first.
    a[4] = 4;
    host::contract_with_argmax<MaxPlus>(dense_tensor<const float>(a.data(), {2, 3, 2}, {'i', 'k', 'l'}),
                                        dense_tensor<const float>(b.data(), {2, 3}, {'l', 'k'}),
                                        dense_tensor(c.data(), {2}, {'i'}), dense_tensor(m.data(), {2}, {'i'}));
    EXPECT_EQ(c[0], 7);
    EXPECT_EQ(m[0], 4);
}

TEST(HostContractArgmax, ChecksItsArguments) {
    std::vector<float> x(24), out(6);
    std::vector<std::int32_t> m(6);
    auto a = dense_tensor<const float>(x.data(), {3, 4}, {'i', 'k'});
    auto b = dense_tensor<const float>(x.data(), {4, 2}, {'k', 'j'});
    auto c = dense_tensor(out.data(), {3, 2}, {'i', 'j'});
    EXPECT_THAT(
        [&] {
            host::contract_with_argmax<MaxPlus>(a, b, c, dense_tensor(m.data(), {2, 3}, {'j', 'x'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("must have C's labels with C's sizes")));
    EXPECT_THAT([&] { host::contract_with_argmax<MaxPlus>(a, b, c, dense_tensor(m.data(), {3}, {'i'})); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("must have C's labels with C's sizes")));
    auto a_alone = dense_tensor<const float>(x.data(), {3, 4, 2}, {'i', 'k', 'x'});
    EXPECT_THAT(
        [&] {
            host::contract_with_argmax<MaxPlus>(a_alone, b, c, dense_tensor(m.data(), {3, 2}, {'i', 'j'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("reduce them first")));
    // The argmax written with C's labels in another order is fine.
    EXPECT_NO_THROW(host::contract_with_argmax<MaxPlus>(a, b, c, dense_tensor(m.data(), {2, 3}, {'j', 'i'})));
}

TEST(ContractCApi, TheArgmaxFormsStatusesAndMessages) {
    std::vector<float> x(20);
    const std::int64_t sa[] = {3, 4}, sta[] = {4, 1}, sb[] = {4, 5}, stb[] = {5, 1}, sc[] = {3, 5}, stc[] = {5, 1};
    const std::int32_t ik[] = {'i', 'k'}, kj[] = {'k', 'j'}, ij[] = {'i', 'j'};
    const tropical_tensor a{x.data(), 2, sa, sta, ik}, b{x.data(), 2, sb, stb, kj}, c{x.data(), 2, sc, stc, ij};
    EXPECT_EQ(tropical_host_contract_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, nullptr, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the tensor descriptor argmax is NULL"));
    EXPECT_EQ(tropical_contract_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, nullptr, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the tensor descriptor argmax is NULL"));
    // The GPU path, before it touches a GPU: A lists l before k but holds k outermost, so no view
    // merges the contracted labels in A's order.
    std::vector<float> y(24), z(9);
    std::vector<std::int32_t> m(9);
    const std::int64_t s3[] = {3, 4, 2}, st3[] = {8, 1, 4}, s3b[] = {2, 4, 3}, st3b[] = {12, 3, 1}, s2[] = {3, 3},
                       st2[] = {3, 1};
    const std::int32_t ilk[] = {'i', 'l', 'k'}, klj[] = {'k', 'l', 'j'};
    const tropical_tensor a3{y.data(), 3, s3, st3, ilk}, b3{y.data(), 3, s3b, st3b, klj}, c3{z.data(), 2, s2, st2, ij},
        m3{m.data(), 2, s2, st2, ij};
    EXPECT_EQ(tropical_contract_argmax(TROPICAL_MAXPLUS, TROPICAL_F32, &a3, &b3, &c3, &m3, nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the contracted labels in the order A lists them"));
    // Without the argmax the same views are fine (refused later only for want of a GPU, not here).
}

TEST(HostContract, TheCxxApiAndABroadcastInput) {
    // b's first dimension has stride 0: one row serves every k.
    std::vector<double> a = {1, 2, 3, 4, 5, 6}, row = {10, 20}, c(4);
    auto va = dense_tensor<const double>(a.data(), {2, 3}, {'i', 'k'});
    TensorView<const double> vb;
    vb.data = row.data(), vb.rank = 2;
    vb.sizes[0] = 3, vb.sizes[1] = 2, vb.strides[0] = 0, vb.strides[1] = 1, vb.labels[0] = 'k', vb.labels[1] = 'j';
    host::contract<MaxPlus>(va, vb, dense_tensor(c.data(), {2, 2}, {'i', 'j'}));
    EXPECT_EQ(c, (std::vector<double>{13, 23, 16, 26}));
}

TEST(HostContract, ChecksItsArguments) {
    std::vector<float> x(12);
    auto a = dense_tensor<const float>(x.data(), {3, 4}, {'i', 'k'});
    auto b = dense_tensor<const float>(x.data(), {5, 2}, {'k', 'j'});
    std::vector<float> out(6);
    EXPECT_THAT(
        [&] {
            host::contract<MaxPlus>(a, b, dense_tensor(out.data(), {3, 2}, {'i', 'j'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("label 107 has size 4 in tensor A but 5 in tensor B")));
    auto b_ok = dense_tensor<const float>(x.data(), {4, 2}, {'k', 'j'});
    EXPECT_THAT(
        [&] {
            host::contract<MaxPlus>(a, b_ok, dense_tensor(out.data(), {3, 2}, {'i', 'z'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("label 122 of tensor C appears in neither A nor B")));
    EXPECT_THAT(
        [&] {
            host::contract<MaxPlus>(a, b_ok, dense_tensor(out.data(), {3, 3}, {'i', 'i'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("tensor C repeats label 105")));
    auto diagonal = dense_tensor<const float>(x.data(), {3, 4}, {'i', 'i'});
    EXPECT_THAT(
        [&] {
            host::contract<MaxPlus>(diagonal, b_ok, dense_tensor(out.data(), {3, 2}, {'i', 'j'}));
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("repeats label 105 over dimensions of sizes 3 and 4")));
    EXPECT_THROW(dense_tensor<float>(x.data(), {3, 4}, {'i'}), InvalidArgument);
}

TEST(ContractCApi, StatusesAndMessages) {
    std::vector<float> x(12);
    const std::int64_t sizes[] = {3, 4}, strides[] = {4, 1};
    const std::int32_t ik[] = {'i', 'k'}, kj[] = {'k', 'j'}, ij[] = {'i', 'j'};
    const tropical_tensor a{x.data(), 2, sizes, strides, ik}, b{x.data(), 2, sizes, strides, kj},
        c{x.data(), 2, sizes, strides, ij};
    EXPECT_EQ(tropical_host_contract(TROPICAL_MAXPLUS, TROPICAL_F32, &a, nullptr, &c, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the tensor descriptor b is NULL"));
    EXPECT_EQ(tropical_host_contract(static_cast<tropical_semiring>(9), TROPICAL_F32, &a, &b, &c, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("unknown semiring (9)"));
    const tropical_host_options accumulate{1, 0};
    EXPECT_EQ(tropical_host_contract(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, &accumulate),
              TROPICAL_INVALID_ARGUMENT);
    const tropical_tensor too_big{x.data(), 99, sizes, strides, ik};
    EXPECT_EQ(tropical_host_contract(TROPICAL_MAXPLUS, TROPICAL_F32, &too_big, &b, &c, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("has rank 99"));
}

TEST(ContractCApi, TheGpuPathSaysWhatNeedsABuffer) {
    // Refused before any GPU is touched: a label that one input alone holds, and strides with no view.
    std::vector<float> x(40);
    const std::int64_t s3[] = {3, 4, 2}, st3[] = {8, 2, 1}, s2[] = {4, 5}, st2[] = {5, 1}, sc[] = {3, 5},
                       stc[] = {5, 1};
    const std::int32_t ikx[] = {'i', 'k', 'x'}, kj[] = {'k', 'j'}, ij[] = {'i', 'j'};
    const tropical_tensor a{x.data(), 3, s3, st3, ikx}, b{x.data(), 2, s2, st2, kj}, c{x.data(), 2, sc, stc, ij};
    EXPECT_EQ(tropical_contract(TROPICAL_MAXPLUS, TROPICAL_F32, &a, &b, &c, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("must be reduced first"));
    // b i k with neither i nor k contiguous: no batch of row- or column-major matrices.
    std::vector<float> y(48), z(30);
    const std::int64_t sa[] = {2, 3, 4}, scattered[] = {1, 16, 2};
    const std::int32_t bik[] = {'b', 'i', 'k'};
    const tropical_tensor a2{y.data(), 3, sa, scattered, bik};
    const std::int64_t sb[] = {2, 4, 5}, stb[] = {20, 5, 1}, sc2[] = {2, 3, 5}, stc2[] = {15, 5, 1};
    const std::int32_t bkj[] = {'b', 'k', 'j'}, bij[] = {'b', 'i', 'j'};
    const tropical_tensor b2{x.data(), 3, sb, stb, bkj}, c2{z.data(), 3, sc2, stc2, bij};
    EXPECT_EQ(tropical_contract(TROPICAL_MAXPLUS, TROPICAL_F32, &a2, &b2, &c2, nullptr), TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the strides of tensor A admit no batched-matrix view"));
}

}  // namespace
