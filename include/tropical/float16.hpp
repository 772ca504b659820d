#pragma once
// The 16-bit floating element types on the host, storage only:
//   bfloat16  float32's upper half (1 sign, 8 exponent and 7 mantissa bits): PyTorch's torch.bfloat16,
//             CUDA's __nv_bfloat16;
//   float16   IEEE 754 binary16 (1 sign, 5 exponent and 10 mantissa bits): torch.float16, NumPy's
//             float16, CUDA's __half.
// Each is 16 bits laid out as PyTorch and the GPU store them, so a tensor's memory is a span of them.
// A value converts to float exactly (float holds every value of both) and from float rounded to
// nearest, ties to even; NaN stays NaN, infinities and signed zeros stay, and a float beyond the
// type's largest finite value rounds to an infinity as IEEE 754 says. Arithmetic and comparisons go
// through float. No CUDA header is needed.
//
// Both are converted here with integer operations: the compilers the library supports do not all have
// a 16-bit float type (Clang before 15 has no _Float16 on x86-64). tests/float16_test.cpp checks every
// value of both, and the rounding of floats against their neighbours found by search.
#include <bit>
#include <cstdint>
#include <limits>

namespace tropical {

class bfloat16 {
public:
    constexpr bfloat16() = default;
    constexpr explicit bfloat16(float f) : bits_(round(std::bit_cast<std::uint32_t>(f))) {}
    constexpr operator float() const { return std::bit_cast<float>(static_cast<std::uint32_t>(bits_) << 16); }
    static constexpr bfloat16 from_bits(std::uint16_t b) {
        bfloat16 x;
        x.bits_ = b;
        return x;
    }
    constexpr std::uint16_t bits() const { return bits_; }

private:
    // The upper half of f's bits, rounded to nearest even on the lower half (a carry into the
    // exponent is the next binade, or infinity past the largest finite value); a NaN keeps its sign
    // and upper payload and is made quiet, so that it cannot round to an infinity.
    static constexpr std::uint16_t round(std::uint32_t f) {
        if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x0040u);
        return static_cast<std::uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
    }
    std::uint16_t bits_ = 0;
};

class float16 {
public:
    constexpr float16() = default;
    constexpr explicit float16(float f) : bits_(round(std::bit_cast<std::uint32_t>(f))) {}
    constexpr operator float() const {
        const std::uint32_t sign = static_cast<std::uint32_t>(bits_ & 0x8000u) << 16;
        const std::uint32_t exponent = (bits_ >> 10) & 0x1fu, mantissa = bits_ & 0x3ffu;
        if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
        if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // a subnormal or zero, exactly
        return sign ? -magnitude : magnitude;
    }
    static constexpr float16 from_bits(std::uint16_t b) {
        float16 x;
        x.bits_ = b;
        return x;
    }
    constexpr std::uint16_t bits() const { return bits_; }

private:
    // f to nearest even: rebiased and rounded on its 13 lowest mantissa bits where the result is
    // normal (a carry past the largest finite value is infinity), shifted with its hidden bit and
    // rounded where it is subnormal; a NaN keeps its sign and upper payload and is made quiet.
    static constexpr std::uint16_t round(std::uint32_t f) {
        const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
        const std::uint32_t a = f & 0x7fffffffu;
        if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
        if (a >= 0x47800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // 2^16 and up, infinity
        if (a >= 0x38800000u) {                                                   // 2^-14 and up: normal
            const std::uint32_t r = a - 0x38000000u;                              // the exponent less 112
            return static_cast<std::uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
        }
        const std::uint32_t exponent = a >> 23;
        if (exponent < 102) return sign;  // below 2^-25, half the least subnormal: zero
        const std::uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126 - exponent;
        return static_cast<std::uint16_t>(sign | ((m + (1u << (shift - 1)) - 1u + ((m >> shift) & 1u)) >> shift));
    }
    std::uint16_t bits_ = 0;
};

static_assert(sizeof(bfloat16) == 2 && sizeof(float16) == 2, "16 bits, as PyTorch and the GPU store them");

namespace detail {
// numeric_limits of both, from their formats: the largest finite value's, the smallest normal's and
// epsilon's bits, the mantissa's digits (with the hidden bit) and the largest exponent.
template <class T, std::uint16_t Max, std::uint16_t Min, std::uint16_t Epsilon, int Digits, int MaxExponent>
struct Float16Limits {
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
    static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = true;
    static constexpr bool is_iec559 = true, is_bounded = true, is_modulo = false;
    static constexpr int digits = Digits, radix = 2, max_exponent = MaxExponent, min_exponent = 3 - MaxExponent;
    static constexpr std::float_round_style round_style = std::round_to_nearest;
    static constexpr T min() noexcept { return T::from_bits(Min); }
    static constexpr T max() noexcept { return T::from_bits(Max); }
    static constexpr T lowest() noexcept { return T::from_bits(Max | 0x8000u); }
    static constexpr T epsilon() noexcept { return T::from_bits(Epsilon); }
    static constexpr T infinity() noexcept { return T::from_bits(static_cast<std::uint16_t>(Max + 1u)); }
    static constexpr T quiet_NaN() noexcept {
        return T::from_bits(static_cast<std::uint16_t>(Max + 1u + (1u << (Digits - 2))));
    }
    static constexpr T denorm_min() noexcept { return T::from_bits(1); }
};
}  // namespace detail

}  // namespace tropical

namespace std {

template <>
struct numeric_limits<tropical::bfloat16>
    : tropical::detail::Float16Limits<tropical::bfloat16, 0x7f7f, 0x0080, 0x3c00, 8, 128> {};
template <>
struct numeric_limits<tropical::float16>
    : tropical::detail::Float16Limits<tropical::float16, 0x7bff, 0x0400, 0x1400, 11, 16> {};

}  // namespace std
