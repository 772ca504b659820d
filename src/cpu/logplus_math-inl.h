// The arithmetic of LogPlus's CPU kernel (cpu/logplus-inl.h), once per SIMD target (see
// cpu/ring-inl.h): 2^x on vectors, exact powers of two, and the scalar steps that finish a result,
// in a wider type.
#if defined(TROPICAL_CPU_LOGPLUS_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_LOGPLUS_MATH_INL_H_
#undef TROPICAL_CPU_LOGPLUS_MATH_INL_H_
#else
#define TROPICAL_CPU_LOGPLUS_MATH_INL_H_
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The constants of element type T. A result's reference is an integer in base 2 (a float that holds
// it exactly), its terms' weights 2^(t * log2e - r).
template <class T>
struct LogConstants;
template <>
struct LogConstants<float> {
    using Wide = double;                                   // a result is finished in this type
    static constexpr float kLog2e = 1.44269504088896341f;  // rounded: finish() divides by this float
    static constexpr float kMagic = 12582912.0f;           // 1.5 * 2^23: x + kMagic rounds x to an integer
    static constexpr int kMantissa = 23, kBias = 127;
    // Finite inputs beyond this magnitude take the scalar path: |a + b| <= 2^23 keeps t * log2e below
    // 2^24, where the references are exact integers and t * log2e - r is exact before its rounding.
    static constexpr float kLargest = 4194304.0f;  // 2^22
    // 2^f on [-1/2, 1/2]: Taylor coefficients (ln 2)^n / n!, n = 1..7; the first left out is below 6e-9.
    static constexpr int kDegree = 7;
    static constexpr float kPoly[kDegree] = {0.693147180559945309f,   0.240226506959100712f,   0.0555041086648215800f,
                                             0.00961812910762847717f, 0.00133335581464284434f, 0.000154035303933816099f,
                                             1.52527338040598403e-05f};
};
template <>
struct LogConstants<double> {
    using Wide = long double;
    static constexpr double kLog2e = 1.4426950408889634074;
    static constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
    static constexpr int kMantissa = 52, kBias = 1023;
    static constexpr double kLargest = 1125899906842624.0;  // 2^50, as for float
    static constexpr int kDegree = 13;                      // the first left out is below 5e-18
    static constexpr double kPoly[kDegree] = {0.6931471805599453,     0.2402265069591007,     0.055504108664821576,
                                              0.009618129107628477,   0.0013333558146428441,  0.00015403530393381606,
                                              1.5252733804059838e-05, 1.3215486790144305e-06, 1.0178086009239696e-07,
                                              7.054911620801121e-09,  4.44553827187081e-10,   2.5678435993488196e-11,
                                              1.3691488853904124e-12};
};

// 2^e for integer-valued e <= 0 (NaN and -inf too): exact, and 0 below 2^(1 - bias), where it only
// scales sums that a new term of weight at least 1 outweighs beyond the precision.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ExactPowerOfTwo(D d, V e) {
    using T = hn::TFromD<D>;
    using C = LogConstants<T>;
    const hn::RebindToUnsigned<D> du;
    using U = hn::TFromD<decltype(du)>;
    const V lowest = hn::Set(d, T(-C::kBias));
    e = hn::IfThenElse(hn::Ge(e, lowest), e, lowest);  // NaN fails the compare
    const V magic = hn::Set(d, C::kMagic);
    const auto n = hn::Sub(hn::BitCast(du, hn::Add(e, magic)), hn::BitCast(du, magic));  // e, modulo 2^bits
    return hn::BitCast(d, hn::ShiftLeft<C::kMantissa>(hn::Add(n, hn::Set(du, U(C::kBias)))));
}

// 2^x for x <= 2, within about 2 ulp: 2^n * p(x - n) with n = round(x) and p the polynomial above;
// 0 for x below 2^(-bias) (-inf too). kNaN: x may be NaN (taken as -inf); else it never is, and the
// bound is a plain Max.
template <bool kNaN, class D, class V = hn::Vec<D>>
HWY_INLINE V Exp2(D d, V x) {
    using T = hn::TFromD<D>;
    using C = LogConstants<T>;
    const hn::RebindToUnsigned<D> du;
    using U = hn::TFromD<decltype(du)>;
    const V lowest = hn::Set(d, T(-C::kBias));
    if constexpr (kNaN) x = hn::IfThenElse(hn::Ge(x, lowest), x, lowest);
    else x = hn::Max(x, lowest);
    const V magic = hn::Set(d, C::kMagic);
    const V shifted = hn::Add(x, magic);
    const V f = hn::Sub(x, hn::Sub(shifted, magic));  // in [-1/2, 1/2], exactly
    V p = hn::Set(d, C::kPoly[C::kDegree - 1]);
    HWY_UNROLL(16) for (int i = C::kDegree - 2; i >= 0; --i) p = hn::MulAdd(p, f, hn::Set(d, C::kPoly[i]));
    p = hn::MulAdd(p, f, hn::Set(d, T(1)));
    const auto n = hn::Sub(hn::BitCast(du, shifted), hn::BitCast(du, magic));
    const V scale = hn::BitCast(d, hn::ShiftLeft<C::kMantissa>(hn::Add(n, hn::Set(du, U(C::kBias)))));
    return hn::Mul(p, scale);  // n = -bias: scale is +0
}

// A result from its reference r and its sum of weights (in base 2), in the wide type, by the rules
// of src/reference/reference.hpp: NaN and +inf references are the result; no finite term gives -inf.
// Dividing by the float log2e that made the weights makes a lone term come back as itself.
template <class T, class W = typename LogConstants<T>::Wide>
W FinishLog(T r, T sum) {
    if (!(r < std::numeric_limits<T>::infinity())) return static_cast<W>(r);
    if (!(sum > T(0))) return -std::numeric_limits<W>::infinity();
    return (static_cast<W>(r) + std::log2(static_cast<W>(sum))) / static_cast<W>(LogConstants<T>::kLog2e);
}

// log(exp(x) + exp(y)) by the rules: NaN if either is, else +inf if either is, else the other where
// one is -inf.
template <class W>
W LogAdd(W x, W y) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<W>::quiet_NaN();
    const W hi = x > y ? x : y, lo = x > y ? y : x;
    if (lo == -std::numeric_limits<W>::infinity() || hi == std::numeric_limits<W>::infinity()) return hi;
    return hi + std::log1p(std::exp(lo - hi));
}

// A finished result into C: written, or with accumulate combined with C's old value (-0 read as
// +0), rounded once; never -0.
template <class T, class W>
HWY_INLINE void StoreLog(W v, bool accumulate, T& out) {
    if (accumulate) v = LogAdd<W>(static_cast<W>(out + T(0)), v);
    out = static_cast<T>(v) + T(0);
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_LOGPLUS_MATH_INL_H_
