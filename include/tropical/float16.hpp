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
// float16's conversions are the compiler's (_Float16: GCC 12 and Clang 15 on x86-64 and AArch64);
// bfloat16's are float32's upper half, rounded.
#include <bit>
#include <cstdint>
#include <limits>

#if !defined(__FLT16_MAX__)
#error "tropical/float16.hpp needs a compiler with _Float16 (GCC 12 or Clang 15 on x86-64 or AArch64)"
#endif

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
    constexpr explicit float16(float f) : bits_(std::bit_cast<std::uint16_t>(static_cast<_Float16>(f))) {}
    constexpr operator float() const { return static_cast<float>(std::bit_cast<_Float16>(bits_)); }
    static constexpr float16 from_bits(std::uint16_t b) {
        float16 x;
        x.bits_ = b;
        return x;
    }
    constexpr std::uint16_t bits() const { return bits_; }

private:
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
