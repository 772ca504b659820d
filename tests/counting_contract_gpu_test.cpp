// tropical::counting_contract and the C ABI's tropical_counting_contract on the GPU against the host
// counting contraction (tests/counting_contract_test.cpp checks that one against a brute-force loop):
// f32 and f64 values from -2 to 2 (many ties, so that equal maxima add their counts) with -inf,
// +inf and NaN among them; counts of 1 (each count is then the number of terms attaining the value)
// or from 0 to 3; matrix products small and large, batches outermost and inside, a transposed
// output, padded and column-major parts, broadcast (stride 0) batches, two contracted labels, outer
// products, a scalar result, an empty contraction. Outputs start poisoned (a value no result takes),
// so that a missed element or a stray write into padding shows; values and counts must equal the
// host's exactly. Also what the GPU path refuses (strides with no batched view, a label one input
// alone holds): Unsupported, a message that names the tensor, and the outputs untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <tropical/c_api.h>
#include <tropical/contract.hpp>
#include <tropical/device_buffer.hpp>
#include <tropical/error.hpp>
#include "support/contract_cases.hpp"
#include "support/gpu.hpp"

using namespace tropical;
using namespace tropical::testing;
using ::testing::HasSubstr;

namespace {

using Case = CountingCase;

std::vector<Case> cases() {
    const TensorSpec ik = spec("ik", {33, 40}), kj = spec("kj", {40, 17}), ij = spec("ij", {33, 17});
    const TensorSpec bik = spec("bik", {3, 6, 5}), bkj = spec("bkj", {3, 5, 4}), bij = spec("bij", {3, 6, 4});
    return {
        {"product", ik, ik, kj, kj, ij, ij},
        {"product, counts column-major", ik, spec("ik", {33, 40}, {1, 0}), kj, spec("kj", {40, 17}, {1, 0}), ij,
         spec("ij", {33, 17}, {1, 0})},
        {"large product", spec("ik", {130, 70}), spec("ik", {130, 70}), spec("kj", {70, 90}, {1, 0}),
         spec("kj", {70, 90}), spec("ij", {130, 90}), spec("ij", {130, 90})},
        {"batched", spec("bik", {4, 9, 12}), spec("bik", {4, 9, 12}), spec("bkj", {4, 12, 7}),
         spec("bkj", {4, 12, 7}, {0, 2, 1}), spec("bij", {4, 9, 7}), spec("bij", {4, 9, 7}, {0, 2, 1})},
        // b between the other labels of A and B (their batch stride inside a row), outermost in C.
        {"batch inside", spec("ibk", {5, 3, 8}), spec("ibk", {5, 3, 8}, {2, 1, 0}), spec("kbj", {8, 3, 6}, {2, 1, 0}),
         spec("kbj", {8, 3, 6}), spec("bji", {3, 6, 5}), spec("bji", {3, 6, 5}, {0, 2, 1})},
        {"many small batches", spec("bik", {300, 3, 5}), spec("bik", {300, 3, 5}), spec("bkj", {300, 5, 2}),
         spec("bkj", {300, 5, 2}), spec("bij", {300, 3, 2}), spec("bij", {300, 3, 2})},
        {"transposed output", spec("ik", {7, 9}, {1, 0}), spec("ik", {7, 9}), spec("kj", {9, 5}, {1, 0}),
         spec("kj", {9, 5}, {1, 0}), spec("ji", {5, 7}), spec("ji", {5, 7}, {1, 0})},
        {"padded", spec("ik", {6, 4}, {}, 3), spec("ik", {6, 4}, {}, 1), spec("kj", {4, 5}, {}, 2), spec("kj", {4, 5}),
         spec("ij", {6, 5}, {}, 1), spec("ij", {6, 5}, {1, 0}, 2)},
        // Stride 0 over the batch: A's values and B's counts, then the whole of A.
        {"broadcast values and counts", broadcast(bik, "b"), bik, bkj, broadcast(bkj, "b"), bij, bij},
        {"broadcast operand", broadcast(bik, "b"), broadcast(bik, "b"), bkj, bkj, bij, spec("bij", {3, 6, 4}, {}, 2)},
        {"two contracted", spec("ikl", {6, 4, 5}), spec("ikl", {6, 4, 5}, {}, 2), spec("klj", {4, 5, 7}),
         spec("klj", {4, 5, 7}), spec("ij", {6, 7}), spec("ij", {6, 7})},
        {"outer product", spec("i", {8}), spec("i", {8}), spec("j", {3}), spec("j", {3}), spec("ij", {8, 3}),
         spec("ij", {8, 3}, {1, 0})},
        {"to a scalar", spec("ij", {2, 3}), spec("ij", {2, 3}), spec("ij", {2, 3}), spec("ij", {2, 3}), spec("", {}),
         spec("", {})},
        {"empty contraction", spec("ik", {3, 0}), spec("ik", {3, 0}), spec("kj", {0, 2}), spec("kj", {0, 2}),
         spec("ij", {3, 2}), spec("ij", {3, 2})},
    };
}

// Written into the outputs first: no result is fractional.
template <class T>
constexpr T kValuePoison = T(-77.5);
constexpr double kCountPoison = 12345.25;

// Values from -2 to 2 (many ties) with a few -inf (1 in 30) and +inf (1 in 600); with `nan`, also
// NaN (1 in 600). Rare, the last two: a term with either decides its element.
template <class T>
std::vector<T> random_pair_values(std::int64_t n, bool nan, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(0, 599);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) {
        const int r = pick(rng);
        x = r < 20          ? -std::numeric_limits<T>::infinity()
            : r < 21        ? std::numeric_limits<T>::infinity()
            : r < 22 && nan ? std::numeric_limits<T>::quiet_NaN()
                            : static_cast<T>(r % 5 - 2);
    }
    return v;
}

// Counts from 0 to 3, or 1 everywhere.
std::vector<double> random_counts(std::int64_t n, bool ones, std::mt19937& rng) {
    std::uniform_int_distribution<int> pick(0, 3);
    std::vector<double> c(static_cast<std::size_t>(n), 1.0);
    if (!ones)
        for (double& x : c) x = pick(rng);
    return c;
}

tropical_tensor descriptor(const TensorSpec& s, const void* data, std::vector<std::int32_t>& labels) {
    labels.assign(s.labels.begin(), s.labels.end());
    return {data, static_cast<std::int32_t>(s.sizes.size()), s.sizes.data(), s.strides.data(), labels.data()};
}

bool same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// One case's buffers on the host and on the GPU; outputs poisoned in both.
template <class T>
struct Buffers {
    std::vector<T> av, bv, cv;
    std::vector<double> ac, bc, cc;
    DeviceBuffer<T> dav, dbv, dcv;
    DeviceBuffer<double> dac, dbc, dcc;

    Buffers(const Case& k, bool ones, bool nan, std::mt19937& rng)
        : av(random_pair_values<T>(k.a.span, nan, rng)),
          bv(random_pair_values<T>(k.b.span, nan, rng)),
          cv(static_cast<std::size_t>(k.c.span), kValuePoison<T>),
          ac(random_counts(k.a_counts.span, ones, rng)),
          bc(random_counts(k.b_counts.span, ones, rng)),
          cc(static_cast<std::size_t>(k.c_counts.span), kCountPoison),
          dav(std::span<const T>(av)),
          dbv(std::span<const T>(bv)),
          dcv(std::span<const T>(cv)),
          dac(std::span<const double>(ac)),
          dbc(std::span<const double>(bc)),
          dcc(std::span<const double>(cc)) {}

    // On the GPU, through the C++ template or the C ABI.
    void run_gpu(const Case& k, bool through_c_abi) {
        if (!through_c_abi) {
            tropical::counting_contract<T>(
                view_of<const T>(k.a, dav.data()), view_of<const double>(k.a_counts, dac.data()),
                view_of<const T>(k.b, dbv.data()), view_of<const double>(k.b_counts, dbc.data()),
                view_of<T>(k.c, dcv.data()), view_of<double>(k.c_counts, dcc.data()));
            return;
        }
        std::vector<std::int32_t> l[6];
        const tropical_tensor t[6] = {descriptor(k.a, dav.data(), l[0]), descriptor(k.a_counts, dac.data(), l[1]),
                                      descriptor(k.b, dbv.data(), l[2]), descriptor(k.b_counts, dbc.data(), l[3]),
                                      descriptor(k.c, dcv.data(), l[4]), descriptor(k.c_counts, dcc.data(), l[5])};
        const tropical_options options{nullptr, 0, 0};
        ASSERT_EQ(tropical_counting_contract(std::is_same_v<T, float> ? TROPICAL_F32 : TROPICAL_F64, &t[0], &t[1],
                                             &t[2], &t[3], &t[4], &t[5], &options),
                  TROPICAL_SUCCESS)
            << k.name << ": " << tropical_last_error_message();
    }

    // The host counting contraction into cv and cc (poisoned like the GPU's outputs).
    void run_host(const Case& k) {
        tropical::host::counting_contract<T>(
            view_of<const T>(k.a, av.data()), view_of<const double>(k.a_counts, ac.data()),
            view_of<const T>(k.b, bv.data()), view_of<const double>(k.b_counts, bc.data()), view_of<T>(k.c, cv.data()),
            view_of<double>(k.c_counts, cc.data()));
    }
};

template <class T>
void check_every_case() {
    std::mt19937 rng(29);
    int ties = 0;
    for (const Case& k : cases()) {
        for (int round = 0; round < 4; ++round) {
            // Counts of 1 first; NaN in the last two rounds only (it hides the other elements).
            const bool ones = round == 0, nan = round >= 2, through_c_abi = round % 2 == 1;
            const std::string where = std::string(k.name) + ", " + std::string(to_string(dtype_of<T>())) +
                                      (ones ? ", counts 1" : ", counts 0 to 3") + (nan ? ", NaN" : "") +
                                      (through_c_abi ? ", C ABI" : ", C++");
            SCOPED_TRACE(where);
            Buffers<T> x(k, ones, nan, rng);
            x.run_gpu(k, through_c_abi);
            if (::testing::Test::HasFatalFailure()) return;
            x.run_host(k);
            // Whole buffers: the elements equal, the padding still the poison in both.
            const std::vector<T> got_values = x.dcv.to_host();
            const std::vector<double> got_counts = x.dcc.to_host();
            for (std::size_t n = 0; n < x.cv.size(); ++n)
                ASSERT_PRED2(same, got_values[n], x.cv[n]) << "values at offset " << n;
            for (std::size_t n = 0; n < x.cc.size(); ++n) {
                ASSERT_PRED2(same, got_counts[n], x.cc[n]) << "counts at offset " << n;
                if (ones && x.cc[n] > 1 && x.cc[n] != kCountPoison) ++ties;
            }
        }
    }
    EXPECT_GT(ties, 100) << "too few ties: the counts of equal maxima were hardly added";
}

TEST(GpuCountingContract, MatchesTheHostF32) {
    TROPICAL_REQUIRE_GPU();
    check_every_case<float>();
}

TEST(GpuCountingContract, MatchesTheHostF64) {
    TROPICAL_REQUIRE_GPU();
    check_every_case<double>();
}

// What the C++ call throws as Unsupported: its message, or a note that it did not throw.
template <class F>
std::string refusal(F&& call) {
    try {
        call();
    } catch (const Unsupported& e) {
        return e.what();
    }
    return "(not refused)";
}

TEST(GpuCountingContract, RefusesWhatNeedsABufferAndSaysWhy) {
    TROPICAL_REQUIRE_GPU();
    struct Refused {
        Case k;
        const char* says;
    };
    const Refused all[] = {
        // A's counts hold l outermost: k and l do not merge in the order A's values give them.
        {{"counts apart from their values", spec("ikl", {3, 2, 4}), spec("ikl", {3, 2, 4}, {2, 0, 1}),
          spec("klj", {2, 4, 3}), spec("klj", {2, 4, 3}), spec("ij", {3, 3}), spec("ij", {3, 3})},
         "the strides of tensor A's counts admit no batched-matrix view"},
        // The batch innermost in B's values: neither k nor j steps by 1.
        {{"B interleaved", spec("bik", {2, 3, 4}), spec("bik", {2, 3, 4}), spec("bkj", {2, 4, 5}, {1, 2, 0}),
          spec("bkj", {2, 4, 5}), spec("bij", {2, 3, 5}), spec("bij", {2, 3, 5})},
         "the strides of tensor B admit no batched-matrix view"},
        // The batch innermost in C's counts: a batch stride below the span of a matrix.
        {{"C's counts interleaved", spec("bik", {2, 3, 4}), spec("bik", {2, 3, 4}), spec("bkj", {2, 4, 5}),
          spec("bkj", {2, 4, 5}), spec("bij", {2, 3, 5}), spec("bij", {2, 3, 5}, {1, 2, 0})},
         "the strides of tensor C's counts admit no batched-matrix view"},
        {{"a label of A alone", spec("ikx", {3, 4, 2}), spec("ikx", {3, 4, 2}), spec("kj", {4, 5}), spec("kj", {4, 5}),
          spec("ij", {3, 5}), spec("ij", {3, 5})},
         "must be reduced first"},
    };
    std::mt19937 rng(31);
    for (const Refused& r : all) {
        const Case& k = r.k;
        Buffers<float> x(k, false, false, rng);
        EXPECT_THAT(refusal([&] { x.run_gpu(k, false); }), HasSubstr(r.says)) << k.name;
        std::vector<std::int32_t> l[6];
        const tropical_tensor t[6] = {descriptor(k.a, x.dav.data(), l[0]), descriptor(k.a_counts, x.dac.data(), l[1]),
                                      descriptor(k.b, x.dbv.data(), l[2]), descriptor(k.b_counts, x.dbc.data(), l[3]),
                                      descriptor(k.c, x.dcv.data(), l[4]), descriptor(k.c_counts, x.dcc.data(), l[5])};
        EXPECT_EQ(tropical_counting_contract(TROPICAL_F32, &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], nullptr),
                  TROPICAL_UNSUPPORTED)
            << k.name;
        EXPECT_THAT(tropical_last_error_message(), HasSubstr(r.says)) << k.name;
        EXPECT_EQ(x.dcv.to_host(), x.cv) << k.name << ": C's values written by a refused call";
        EXPECT_EQ(x.dcc.to_host(), x.cc) << k.name << ": C's counts written by a refused call";
        // The host path makes the buffers the GPU's lacks.
        EXPECT_NO_THROW(x.run_host(k)) << k.name;
    }
}

}  // namespace
