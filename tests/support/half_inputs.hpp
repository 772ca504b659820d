#pragma once
// Inputs for the 16-bit element types' tests (bfloat16, float16, int16): mostly values on a coarse
// grid, so that terms tie exactly or after rounding, some over a wide range of exponents (sums and
// products round), and with `edges` the types' edge values mixed in: +-inf, NaN, -0, the largest
// and smallest magnitudes, subnormals; for int16 the semiring's zero and the ends of the documented
// range (|x| <= 2^12 for MaxPlus and MinPlus, the whole type for MaxMin and MinMax).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <tropical/float16.hpp>
#include <tropical/types.hpp>
#include "support/random_inputs.hpp"

namespace tropical::testing {

template <class H>
H half_input(Rng& rng, Semiring s, bool edges) {
    if constexpr (std::is_same_v<H, std::int16_t>) {
        const bool plus = info(s).times == TimesKind::Add;
        const std::int16_t lim = plus ? std::int16_t{4096} : std::numeric_limits<std::int16_t>::max();
        if (edges && rng.chance(0.1)) {
            const std::int16_t zero = zero_of<std::int16_t>(s);
            const std::int16_t picks[] = {zero, lim, static_cast<std::int16_t>(-lim), 0,
                                          plus ? zero : std::numeric_limits<std::int16_t>::min()};
            return picks[rng.integer(0, 4)];
        }
        return static_cast<std::int16_t>(rng.chance(0.5) ? rng.integer(-8, 8) : rng.integer(-lim, lim));
    } else {
        using L = std::numeric_limits<H>;
        const bool nonnegative = s == Semiring::MaxMul;
        if (edges && rng.chance(0.08)) {
            const float inf = std::numeric_limits<float>::infinity();
            const float picks[] = {inf,
                                   -inf,
                                   std::numeric_limits<float>::quiet_NaN(),
                                   -0.0f,
                                   0.0f,
                                   static_cast<float>(L::max()),
                                   static_cast<float>(L::lowest()),
                                   static_cast<float>(L::denorm_min()),
                                   -static_cast<float>(L::min())};
            const float x = picks[rng.integer(0, 8)];
            return H(nonnegative && !std::isnan(x) ? std::fabs(x) : x);
        }
        const double v = rng.chance(0.3) ? std::ldexp(rng.real(-1, 1), static_cast<int>(rng.integer(-20, 14)))
                                         : static_cast<double>(rng.integer(-64, 64)) / 8.0;
        return H(static_cast<float>(nonnegative ? std::fabs(v) : v));
    }
}

// The bits of a 16-bit element, and whether two results are the same (NaN for NaN, floats).
template <class H>
std::uint16_t half_bits(H x) {
    if constexpr (std::is_same_v<H, std::int16_t>) return static_cast<std::uint16_t>(x);
    else return x.bits();
}
template <class H>
bool same_half(H want, H got) {
    if (half_bits(want) == half_bits(got)) return true;
    if constexpr (std::is_same_v<H, std::int16_t>) return false;
    else return std::isnan(static_cast<float>(want)) && std::isnan(static_cast<float>(got));
}

}  // namespace tropical::testing
