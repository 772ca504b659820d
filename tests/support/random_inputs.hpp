#pragma once
// The type parameters and the random inputs of the GPU correctness tests. Every test draws from a
// fresh seed (std::random_device), shown on failure through SCOPED_TRACE; TROPICAL_TEST_SEED=<seed>
// replays it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tropical/types.hpp>
#include "reference/reference.hpp"
#include "support/sanitizers.hpp"

namespace tropical::testing {

// ---------------------------------------------------------------------------------------------
// Type parameters: one semiring and one element type.

template <class S, class T>
struct Case {
    using Ring = S;
    using Elem = T;
};

#define TROPICAL_CASES_OF(T) Case<MaxPlus, T>, Case<MinPlus, T>, Case<MaxMul, T>, Case<MaxMin, T>, Case<MinMax, T>
using AllCases = ::testing::Types<TROPICAL_CASES_OF(float), TROPICAL_CASES_OF(double), TROPICAL_CASES_OF(std::int32_t),
                                  TROPICAL_CASES_OF(std::int64_t)>;
using FloatCases = ::testing::Types<TROPICAL_CASES_OF(float), TROPICAL_CASES_OF(double)>;
#undef TROPICAL_CASES_OF

// The cases of the tests that run slowest under AddressSanitizer: the emulated device code
// (tests/support/emulated_products.hpp: a fiber per thread, every load instrumented, 5 to 10 times
// slower) and the CPU products at their largest shapes. Under ASan those take one semiring per type,
// in turn, so that each type and each semiring is met once. What ASan adds, bounds and lifetimes of
// the indexing, depends on the element's size and the layouts, not on the semiring; the plain
// build's run covers every pair.
using AsanSizedCases =
    std::conditional_t<under_address_sanitizer,
                       ::testing::Types<Case<MaxPlus, float>, Case<MinPlus, double>, Case<MaxMul, std::int32_t>,
                                        Case<MaxMin, std::int64_t>, Case<MinMax, float>>,
                       AllCases>;

// "f32_maxplus", for the names of typed tests.
struct CaseName {
    template <class C>
    static std::string GetName(int) {
        return std::string(to_string(dtype_of<typename C::Elem>())) + "_" + std::string(to_string(C::Ring::value));
    }
};

// 0, 1, ... one per (type, semiring), so that each type parameter can walk the layouts from a
// different starting point.
template <class C>
constexpr int case_index() {
    const int t = static_cast<int>(dtype_of<typename C::Elem>());
    const int s = static_cast<int>(C::Ring::value);
    return t * static_cast<int>(std::size(all_semirings)) + s;
}

// ---------------------------------------------------------------------------------------------
// Randomness.

inline std::uint64_t test_seed() {
    if (const char* s = std::getenv("TROPICAL_TEST_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) : seed_(seed), engine_(seed) {}
    std::uint64_t seed() const { return seed_; }
    // Uniform in [lo, hi].
    std::int64_t integer(std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
    }
    double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(engine_); }

private:
    std::uint64_t seed_;
    std::mt19937_64 engine_;
};

inline std::string seed_message(std::uint64_t seed) {
    return "random seed " + std::to_string(seed) + " (replay with TROPICAL_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace tropical::testing

// Declares `Rng name` with a fresh seed, reported by every failure in the enclosing scope.
#define TROPICAL_TEST_RNG(name)                                      \
    ::tropical::testing::Rng name(::tropical::testing::test_seed()); \
    SCOPED_TRACE(::tropical::testing::seed_message(name.seed()))

namespace tropical::testing {

// What random values look like.
enum class Values {
    Typical,  // floats uniform in [-10, 10] ([0, 10] for MaxMul); integers mostly small, some across
              // the documented range and at its ends; now and then the semiring's zero
    Ties,     // {0, 1, 2} and now and then the zero: many exact ties, for the argmax rule
};

template <class T>
T random_value(Rng& rng, Semiring s, Values values) {
    const T zero = reference::zero<T>(s);
    if (values == Values::Ties) {
        if (rng.chance(0.1)) return zero;
        return static_cast<T>(rng.integer(0, 2));
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (rng.chance(0.02)) return zero;
        return static_cast<T>(rng.real(s == Semiring::MaxMul ? 0.0 : -10.0, 10.0));
    } else {
        const T lo = reference::FiniteRange<T>::lowest(s);
        const T hi = reference::FiniteRange<T>::highest(s);
        const double u = rng.real(0.0, 1.0);
        if (u < 0.02) return zero;
        if (u < 0.03) return rng.chance(0.5) ? lo : hi;
        if (u < 0.15) return static_cast<T>(rng.integer(lo, hi));
        return static_cast<T>(rng.integer(s == Semiring::MaxMul ? 0 : -100, 100));
    }
}

// The values where semirings are easy to get wrong: the zero, the ends of the documented range,
// small values, and for floats the infinities (MaxMul: +inf only), NaN and denormals. Not -0: see
// special_values_with_negative_zero.
template <class T>
std::vector<T> special_values(Semiring s) {
    using L = std::numeric_limits<T>;
    const T zero = reference::zero<T>(s);
    const T lo = reference::FiniteRange<T>::lowest(s), hi = reference::FiniteRange<T>::highest(s);
    std::vector<T> v = {zero, hi, T(hi - 1), T(0), T(1), T(2)};
    if (s != Semiring::MaxMul) v.insert(v.end(), {lo, T(lo + 1), T(-1), T(-2)});
    if constexpr (std::is_floating_point_v<T>) {
        v.insert(v.end(), {L::infinity(), L::quiet_NaN(), L::min(), L::denorm_min(), T(0.5), T(1e30)});
        if (s != Semiring::MaxMul) v.insert(v.end(), {-L::infinity(), T(-0.75), -L::denorm_min()});
    }
    return v;
}

// The same and, for floats, -0. The CPU path and the reference keep an old C of -0 that an
// accumulating product leaves in place; the GPU kernels write it back as +0 (seen on the H200,
// 2026-11-25): equal values, other bits, so the GPU edge-value test leaves -0 out of its draws.
template <class T>
std::vector<T> special_values_with_negative_zero(Semiring s) {
    std::vector<T> v = special_values<T>(s);
    if constexpr (std::is_floating_point_v<T>) v.push_back(T(-0.0));
    return v;
}

// A few values to scatter among typical ones: NaN, both infinities, -0 and the zero for floats; the
// ends of the documented range and the zero for integers.
template <class T>
std::vector<T> scattered_specials(Semiring s) {
    if constexpr (std::is_floating_point_v<T>) {
        const T inf = std::numeric_limits<T>::infinity();
        return {std::numeric_limits<T>::quiet_NaN(), inf, -inf, T(-0.0), reference::zero<T>(s)};
    } else {
        return {reference::FiniteRange<T>::lowest(s), reference::FiniteRange<T>::highest(s), reference::zero<T>(s)};
    }
}

}  // namespace tropical::testing
