// tropical::host::counting_contract and the C ABI's tropical_host_counting_contract against a
// brute-force loop over every label assignment with the reference's rules for (value, count) pairs
// (src/reference/reference.hpp): random small integers, so that many terms tie and counts exceed 1,
// with -inf, +inf and NaN among them; odd shapes, batches, diagonals, labels one input alone holds,
// transposed, padded and broadcast (stride 0) operands, counts laid out apart from their values,
// outputs that need a buffer. Also the checks, and what the GPU path refuses before it touches a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/contract.hpp>
#include <tropical/error.hpp>
#include "reference/reference.hpp"
#include "support/contract_cases.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

using Case = CountingCase;

// Where an input's label is reduced before the product, -inf + +inf is not distributive (a step's
// max(-inf, 3) + +inf is +inf; the loop's -inf + +inf among the terms makes NaN): no +inf there.
std::vector<Case> cases() {
    const TensorSpec ik = spec("ik", {3, 4}), kj = spec("kj", {4, 5}), ij = spec("ij", {3, 5});
    return {
        {"product", ik, ik, kj, kj, ij, ij},
        {"odd shapes, counts transposed", spec("ik", {5, 7}), spec("ik", {5, 7}, {1, 0}), spec("kj", {7, 3}),
         spec("kj", {7, 3}, {1, 0}), spec("ij", {5, 3}), spec("ij", {5, 3}, {1, 0})},
        {"batched", spec("bik", {2, 3, 4}), spec("bik", {2, 3, 4}), spec("bkj", {2, 4, 5}), spec("bkj", {2, 4, 5}),
         spec("bij", {2, 3, 5}), spec("bij", {2, 3, 5}, {1, 2, 0})},
        {"batch inside", spec("ibk", {3, 2, 4}), spec("ibk", {3, 2, 4}), spec("kbj", {4, 2, 5}),
         spec("kbj", {4, 2, 5}, {2, 1, 0}), spec("jbi", {5, 2, 3}), spec("jbi", {5, 2, 3})},
        {"two contracted", spec("ikl", {3, 2, 4}), spec("ikl", {3, 2, 4}, {2, 0, 1}), spec("lkj", {4, 2, 3}),
         spec("lkj", {4, 2, 3}), spec("ij", {3, 3}), spec("ij", {3, 3})},
        {"padded", spec("ik", {3, 4}, {}, 3), spec("ik", {3, 4}, {}, 1), spec("kj", {4, 5}, {}, 2), kj,
         spec("ij", {3, 5}, {}, 1), spec("ij", {3, 5}, {}, 2)},
        {"outer product", spec("i", {3}), spec("i", {3}), spec("j", {4}), spec("j", {4}), spec("ij", {3, 4}),
         spec("ij", {3, 4})},
        {"to a scalar", spec("ij", {2, 3}), spec("ij", {2, 3}), spec("ji", {3, 2}), spec("ji", {3, 2}), spec("", {}),
         spec("", {})},
        {"diagonal", spec("iik", {3, 3, 2}), spec("iik", {3, 3, 2}, {2, 1, 0}), spec("kj", {2, 4}), spec("kj", {2, 4}),
         spec("ij", {3, 4}), spec("ij", {3, 4})},
        {"broadcast values and counts", ik, broadcast(ik, "ik"), broadcast(kj, "k"), broadcast(kj, "kj"), ij, ij},
        {"a label of A alone", spec("ikx", {3, 4, 3}), spec("ikx", {3, 4, 3}, {2, 0, 1}), kj, kj, ij, ij, false},
        {"labels of both alone", spec("xik", {2, 3, 4}), spec("xik", {2, 3, 4}), spec("kjy", {4, 5, 3}),
         spec("kjy", {4, 5, 3}, {1, 2, 0}), ij, ij, false},
        {"no view: interleaved", spec("bik", {2, 3, 4}, {1, 0, 2}), spec("bik", {2, 3, 4}),
         spec("bkj", {2, 4, 5}, {2, 0, 1}), spec("bkj", {2, 4, 5}), spec("bij", {2, 3, 5}, {1, 2, 0}),
         spec("bij", {2, 3, 5}, {2, 0, 1})},
        {"empty contraction", spec("ik", {3, 0}), spec("ik", {3, 0}), spec("kj", {0, 2}), spec("kj", {0, 2}),
         spec("ij", {3, 2}), spec("ij", {3, 2})},
        {"empty output", spec("ik", {0, 2}), spec("ik", {0, 2}), spec("kj", {2, 3}), spec("kj", {2, 3}),
         spec("ij", {0, 3}), spec("ij", {0, 3})},
    };
}

// The contraction by brute force, by the reference's (+) and (x) of pairs, into dense row-major
// values and counts of c's sizes.
template <class T>
std::pair<std::vector<T>, std::vector<double>> brute_counting(const Case& k, const std::vector<T>& av,
                                                              const std::vector<double>& ac, const std::vector<T>& bv,
                                                              const std::vector<double>& bc) {
    using reference::detail::counted;
    std::vector<reference::Counted<T>> out(element_count(k.c), {-std::numeric_limits<T>::infinity(), 0.0});
    for_each_term(k.a, k.b, k.c, [&](const Term& t) {
        const auto x = counted(av[t.offset(k.a)], ac[t.offset(k.a_counts)]);
        const auto y = counted(bv[t.offset(k.b)], bc[t.offset(k.b_counts)]);
        auto& slot = out[t.position];
        slot = reference::detail::counting_plus(slot, counted<T>(x.value + y.value, x.count * y.count));
    });
    std::vector<T> values;
    std::vector<double> counts;
    for (const auto& p : out) values.push_back(p.value), counts.push_back(p.count);
    return {values, counts};
}

// Values from -2 to 2 (many ties) with a few -inf, +inf (where the case allows) and NaN; counts
// from 0 to 3.
template <class T>
std::vector<T> random_pair_values(std::int64_t n, bool posinf, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(0, 39);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) {
        const int r = pick(rng);
        x = r == 0             ? -std::numeric_limits<T>::infinity()
            : r == 1 && posinf ? std::numeric_limits<T>::infinity()
            : r == 2           ? std::numeric_limits<T>::quiet_NaN()
                               : static_cast<T>(r % 5 - 2);
    }
    return v;
}

std::vector<double> random_counts(std::int64_t n, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(0, 3);
    std::vector<double> c(static_cast<std::size_t>(n));
    for (double& x : c) x = pick(rng);
    return c;
}

tropical_tensor descriptor(const TensorSpec& s, const void* data, std::vector<std::int32_t>& labels) {
    labels.assign(s.labels.begin(), s.labels.end());
    return {data, static_cast<std::int32_t>(s.sizes.size()), s.sizes.data(), s.strides.data(), labels.data()};
}

// The position of dense row-major element n (t's labels' order), through t's strides.
std::size_t strided_offset(const TensorSpec& t, std::size_t n) {
    std::int64_t offset = 0, rest = static_cast<std::int64_t>(n);
    for (std::size_t d = t.sizes.size(); d-- > 0;) offset += (rest % t.sizes[d]) * t.strides[d], rest /= t.sizes[d];
    return static_cast<std::size_t>(offset);
}

bool same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

template <class T>
void check_every_case(tropical_dtype dtype) {
    std::mt19937 rng(11);
    int ties = 0;
    for (const Case& k : cases()) {
        for (int round = 0; round < 4; ++round) {
            const auto av = random_pair_values<T>(k.a.span, k.posinf, rng);
            const auto bv = random_pair_values<T>(k.b.span, k.posinf, rng);
            const auto ac = random_counts(k.a_counts.span, rng), bc = random_counts(k.b_counts.span, rng);
            std::vector<T> cv(static_cast<std::size_t>(k.c.span), T(99));
            std::vector<double> cc(static_cast<std::size_t>(k.c_counts.span), 99.0);
            std::vector<std::int32_t> l[6];
            const tropical_tensor t[6] = {descriptor(k.a, av.data(), l[0]), descriptor(k.a_counts, ac.data(), l[1]),
                                          descriptor(k.b, bv.data(), l[2]), descriptor(k.b_counts, bc.data(), l[3]),
                                          descriptor(k.c, cv.data(), l[4]), descriptor(k.c_counts, cc.data(), l[5])};
            const tropical_host_options one_thread{0, 1};
            ASSERT_EQ(tropical_host_counting_contract(dtype, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &one_thread),
                      TROPICAL_SUCCESS)
                << k.name << ": " << tropical_last_error_message();
            const auto [want_values, want_counts] = brute_counting<T>(k, av, ac, bv, bc);
            for (std::size_t n = 0; n < want_values.size(); ++n) {
                const std::string where = std::string(k.name) + ", " + std::string(to_string(dtype_of<T>())) +
                                          ", element " + std::to_string(n);
                ASSERT_PRED2(same, cv[strided_offset(k.c, n)], want_values[n]) << where;
                ASSERT_PRED2(same, cc[strided_offset(k.c_counts, n)], want_counts[n]) << where;
            }
            // With every count 1, a count is the number of terms that attain the value.
            const std::vector<double> ones_a(ac.size(), 1.0), ones_b(bc.size(), 1.0);
            for (double attaining : brute_counting<T>(k, av, ones_a, bv, ones_b).second) ties += attaining > 1;
        }
    }
    EXPECT_GT(ties, 50) << "too few ties: the counts of equal maxima were hardly added";
}

TEST(HostCountingContract, EveryCaseMatchesBruteForce) {
    check_every_case<float>(TROPICAL_F32);
    check_every_case<double>(TROPICAL_F64);
}

TEST(HostCountingContract, TheCxxApi) {
    // Spin pairs: two bonds of a chain a-b-c, each (s, t) -> s * t; the best is 1 + 1, attained by
    // the two aligned assignments; c summed out by a label of B alone.
    std::vector<double> bond = {1, -1, -1, 1}, ones(4, 1.0), value(1), count(1);
    const auto ab = dense_tensor<const double>(bond.data(), {2, 2}, {'a', 'b'});
    const auto bc = dense_tensor<const double>(bond.data(), {2, 2}, {'b', 'c'});
    const auto ab_counts = dense_tensor<const double>(ones.data(), {2, 2}, {'a', 'b'});
    const auto bc_counts = dense_tensor<const double>(ones.data(), {2, 2}, {'b', 'c'});
    host::counting_contract<double>(ab, ab_counts, bc, bc_counts, dense_tensor(value.data(), {}, {}),
                                    dense_tensor(count.data(), {}, {}));
    EXPECT_EQ(value[0], 2);
    EXPECT_EQ(count[0], 2);
}

struct Six {
    std::vector<float> x = std::vector<float>(64);
    std::vector<double> n = std::vector<double>(64);
    std::int64_t sa[2] = {3, 4}, sb[2] = {4, 5}, sc[2] = {3, 5}, st_a[2] = {4, 1}, st_b[2] = {5, 1}, st_c[2] = {5, 1};
    std::int32_t ik[2] = {'i', 'k'}, kj[2] = {'k', 'j'}, ij[2] = {'i', 'j'};
    // Apart in memory: A at 0, B at 16 and C at 40 of each buffer.
    tropical_tensor a{x.data(), 2, sa, st_a, ik}, ac{n.data(), 2, sa, st_a, ik}, b{x.data() + 16, 2, sb, st_b, kj},
        bc{n.data() + 16, 2, sb, st_b, kj}, c{x.data() + 40, 2, sc, st_c, ij}, cc{n.data() + 40, 2, sc, st_c, ij};

    tropical_status host(tropical_dtype t = TROPICAL_F32, const tropical_host_options* o = nullptr) const {
        return tropical_host_counting_contract(t, &a, &ac, &b, &bc, &c, &cc, o);
    }
};

TEST(CountingContractCApi, StatusesAndMessages) {
    Six s;
    EXPECT_EQ(s.host(), TROPICAL_SUCCESS) << tropical_last_error_message();
    EXPECT_EQ(tropical_host_counting_contract(TROPICAL_F32, &s.a, nullptr, &s.b, &s.bc, &s.c, &s.cc, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the tensor descriptor a_counts is NULL"));
    EXPECT_EQ(s.host(TROPICAL_I32), TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("counting values are f32 or f64, not i32"));
    EXPECT_EQ(s.host(static_cast<tropical_dtype>(77)), TROPICAL_INVALID_ARGUMENT);
    const tropical_host_options accumulate{1, 0};
    EXPECT_EQ(s.host(TROPICAL_F32, &accumulate), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("accumulate is not supported"));
    // Counts of another shape, or with other labels, than their values.
    Six other = s;
    const std::int64_t wrong[2] = {3, 5};
    other.ac.sizes = wrong;
    EXPECT_EQ(other.host(), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(),
                HasSubstr("the counts of tensor A must have its values' sizes and labels, dimension by dimension"));
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the values have sizes [3, 4]"));
    other = s;
    other.cc.labels = s.kj;
    other.cc.sizes = s.sb;
    EXPECT_EQ(other.host(), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the counts of tensor C"));
    other = s;
    other.bc.rank = 1;
    EXPECT_EQ(other.host(), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("the counts of tensor B"));
    const std::int64_t negative[2] = {-1, 4};
    other = s;
    other.ac.sizes = negative;
    EXPECT_EQ(other.host(), TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("tensor A's counts has size -1"));
    // The scalar contraction refuses the counting semiring, and says where pairs go.
    EXPECT_EQ(tropical_host_contract(TROPICAL_COUNTING, TROPICAL_F32, &s.a, &s.b, &s.c, nullptr),
              TROPICAL_INVALID_ARGUMENT);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("tropical_counting_contract"));
}

TEST(CountingContractCApi, TheGpuPathSaysWhatNeedsABuffer) {
    // Refused before any GPU is touched: a label one input alone holds; counts whose strides admit
    // no view though their values' do.
    Six s;
    const std::int64_t s3[3] = {3, 4, 2}, st3[3] = {8, 2, 1};
    const std::int32_t ikx[3] = {'i', 'k', 'x'};
    const tropical_tensor a3{s.x.data(), 3, s3, st3, ikx}, ac3{s.n.data(), 3, s3, st3, ikx};
    EXPECT_EQ(tropical_counting_contract(TROPICAL_F32, &a3, &ac3, &s.b, &s.bc, &s.c, &s.cc, nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(), HasSubstr("must be reduced first"));
    const std::int64_t scattered[2] = {2, 8};  // neither i nor k contiguous
    tropical_tensor scattered_counts = s.ac;
    scattered_counts.strides = scattered;
    EXPECT_EQ(tropical_counting_contract(TROPICAL_F32, &s.a, &scattered_counts, &s.b, &s.bc, &s.c, &s.cc, nullptr),
              TROPICAL_UNSUPPORTED);
    EXPECT_THAT(tropical_last_error_message(),
                HasSubstr("the strides of tensor A's counts admit no batched-matrix view"));
    EXPECT_EQ(tropical_counting_contract(TROPICAL_I64, &s.a, &s.ac, &s.b, &s.bc, &s.c, &s.cc, nullptr),
              TROPICAL_UNSUPPORTED);
    // The host path copies what has no view.
    EXPECT_EQ(tropical_host_counting_contract(TROPICAL_F32, &s.a, &scattered_counts, &s.b, &s.bc, &s.c, &s.cc, nullptr),
              TROPICAL_SUCCESS)
        << tropical_last_error_message();
}

}  // namespace
