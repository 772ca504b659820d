// The semirings as the CPU kernels see them, once per SIMD target (Highway: this header is included
// again for each target by foreach_target.h, hence the toggled guard instead of #pragma once).
//
// The semantics are those of src/reference/reference.hpp (the oracle) and kernels/semiring.cuh (the
// GPU), which these traits follow trick for trick: inputs are packed through Stage() (floats: -0
// becomes +0; integers: the zero is clamped to a sentinel so that no sum wraps), accumulators start
// at Init() and Finish() turns them into exact results.
//
// A ring is a struct of static members; the kernels use nothing else:
//   T    Zero()             the exact zero: what K = 0 gives
//   T    Init()             the accumulator's start
//   T    Stage(T x)         the value packed for input x
//   bool Unsafe(T x)        x may make a NaN term (floats); panels without one take the fast kernel
//   V    Times(V a, V b)    a (x) b on packed values that are not NaN
//   M    Better(V x, V y)   x is strictly better than y (false where either is NaN); also scalar
//   V    Pick(V t, V acc)   the better of two values that are not NaN (any of two equal ones)
//   V    Finish(D, V acc)   the exact result from an accumulator; also scalar
//   Elem                    the element type
//   kMayNaN                 floats: terms can be NaN, so NaN-safe kernels are compiled too
//   kTemporaries            registers Times and Pick need beyond the operands (sizes the tile)
//   kTimesDropsNaN          Times may lose a NaN input, so the NaN-safe kernels check for one
//                           (see Term): IEEE + and * keep it, min and max need not (x86's min
//                           returns its second input where either is NaN)
// A new semiring is one such struct and a case in RunProduct and TileFor (cpu/product-inl.h).
#if defined(TROPICAL_CPU_RING_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_RING_INL_H_
#undef TROPICAL_CPU_RING_INL_H_
#else
#define TROPICAL_CPU_RING_INL_H_
#endif

#include <cstdint>
#include <limits>
#include <type_traits>

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Which of two values wins: the larger (max) or the smaller (min).
template <class T, bool kMax>
struct Order {
    using Elem = T;
    static bool Better(T x, T y) { return kMax ? x > y : x < y; }
    template <class V>
    static HWY_INLINE auto Better(V x, V y) {
        if constexpr (kMax) return hn::Gt(x, y);
        else return hn::Lt(x, y);
    }
    template <class V>
    static HWY_INLINE V Pick(V t, V acc) {
        if constexpr (kMax) return hn::Max(t, acc);
        else return hn::Min(t, acc);
    }
};

template <class T>
inline constexpr T kInfinity = std::numeric_limits<T>::infinity();

// x86 before AVX-512 has no 64-bit integer min/max: Highway emulates them with a compare and a
// blend, whose mask needs a register.
inline constexpr bool kEmulatedMinMax64 = HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4);

template <class T>
constexpr int MinMaxTemporaries() {
    return sizeof(T) == 8 && std::is_integral_v<T> && kEmulatedMinMax64 ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Floats: (x) is IEEE, and NaN comes from NaN inputs or from inf - inf and 0 * inf.

template <class T, bool kMax>
struct FloatRing : Order<T, kMax> {
    static constexpr bool kMayNaN = true;
    static constexpr bool kTimesDropsNaN = false;
    static constexpr int kTemporaries = 0;
    static T Stage(T x) { return x + T(0); }
};

template <class T>
struct MaxPlusFloat : FloatRing<T, true> {
    static T Zero() { return -kInfinity<T>; }
    static T Init() { return Zero(); }
    // NaN, or +inf, which meets the zero -inf of the other operand (or of the padding) in a NaN.
    static bool Unsafe(T x) { return !(x < kInfinity<T>); }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        return hn::Add(a, b);
    }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D, hn::Vec<D> acc) {
        return acc;
    }
    static T Finish(T acc) { return acc; }
};

template <class T>
struct MinPlusFloat : FloatRing<T, false> {
    static T Zero() { return kInfinity<T>; }
    static T Init() { return Zero(); }
    static bool Unsafe(T x) { return !(x > -kInfinity<T>); }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        return hn::Add(a, b);
    }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D, hn::Vec<D> acc) {
        return acc;
    }
    static T Finish(T acc) { return acc; }
};

// Terms may be -0 (0 times a negative input, outside the domain); Pick may keep a -0 where the
// definition keeps the +0 it started from, so Finish adds +0, which changes nothing else.
template <class T>
struct MaxMulFloat : FloatRing<T, true> {
    static T Zero() { return T(0); }
    static T Init() { return Zero(); }
    static bool Unsafe(T x) { return !(x < kInfinity<T> && x > -kInfinity<T>); }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        return hn::Mul(a, b);
    }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D d, hn::Vec<D> acc) {
        return hn::Add(acc, hn::Zero(d));
    }
    static T Finish(T acc) { return acc + T(0); }
};

// ---------------------------------------------------------------------------------------------
// Integers: the GPU's sentinel scheme (kernels/semiring.cuh). The zero is packed as a sentinel S of
// magnitude 2^30 (i64: 2^62) and finite inputs satisfy |x| <= R = 2^28 (2^60), so no sum wraps; a
// term that involves a zero is at most S + R, every finite term is beyond that threshold, so
// accumulators start at the threshold and whatever has not passed it finishes as the exact zero.

template <class T>
struct IntScheme {
    static constexpr T kSentinel = T(1) << (sizeof(T) == 4 ? 30 : 62);
    static constexpr T kRange = T(1) << (sizeof(T) == 4 ? 28 : 60);
};

template <class T, bool kMax>
struct IntRing : Order<T, kMax> {
    static constexpr bool kMayNaN = false;
    static constexpr bool kTimesDropsNaN = false;
    static bool Unsafe(T) { return false; }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        return hn::Add(a, b);
    }
};

template <class T>
struct MaxPlusInt : IntRing<T, true> {
    static constexpr int kTemporaries = MinMaxTemporaries<T>();
    static constexpr T kSentinel = -IntScheme<T>::kSentinel;
    static constexpr T kThreshold = kSentinel + IntScheme<T>::kRange;
    static T Zero() { return std::numeric_limits<T>::min(); }
    static T Init() { return kThreshold; }
    static T Stage(T x) { return x > kSentinel ? x : kSentinel; }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D d, hn::Vec<D> acc) {
        return hn::IfThenElse(hn::Gt(acc, hn::Set(d, kThreshold)), acc, hn::Set(d, Zero()));
    }
    static T Finish(T acc) { return acc > kThreshold ? acc : Zero(); }
};

template <class T>
struct MinPlusInt : IntRing<T, false> {
    static constexpr int kTemporaries = MinMaxTemporaries<T>();
    static constexpr T kSentinel = IntScheme<T>::kSentinel - 1;
    static constexpr T kThreshold = kSentinel - IntScheme<T>::kRange;
    static T Zero() { return std::numeric_limits<T>::max(); }
    static T Init() { return kThreshold; }
    static T Stage(T x) { return x < kSentinel ? x : kSentinel; }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D d, hn::Vec<D> acc) {
        return hn::IfThenElse(hn::Lt(acc, hn::Set(d, kThreshold)), acc, hn::Set(d, Zero()));
    }
    static T Finish(T acc) { return acc < kThreshold ? acc : Zero(); }
};

// Targets whose vectors multiply 64-bit lanes themselves: AVX-512, and the portable fallbacks.
#define TROPICAL_CPU_HAS_MUL64 \
    (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR)

// The low 64 bits of a * b in each lane (as the GPU's wrapping multiply); without a 64-bit multiply,
// three 32 x 32 -> 64 multiplies of the halves.
template <class V>
HWY_INLINE V MulLow64(V a, V b) {
#if TROPICAL_CPU_HAS_MUL64
    return hn::Mul(a, b);
#else
    const hn::DFromV<V> d;
    const hn::RebindToUnsigned<decltype(d)> du;
    const hn::Repartition<std::uint32_t, decltype(d)> du32;
    const auto ua = hn::BitCast(du, a), ub = hn::BitCast(du, b);
    const auto low = hn::MulEven(hn::BitCast(du32, ua), hn::BitCast(du32, ub));
    const auto cross = hn::Add(hn::MulEven(hn::BitCast(du32, hn::ShiftRight<32>(ua)), hn::BitCast(du32, ub)),
                               hn::MulEven(hn::BitCast(du32, ua), hn::BitCast(du32, hn::ShiftRight<32>(ub))));
    return hn::BitCast(d, hn::Add(low, hn::ShiftLeft<32>(cross)));
#endif
}

// The zero 0 absorbs by itself, and the documented range keeps every product below overflow.
template <class T>
struct MaxMulInt : IntRing<T, true> {
    static constexpr bool kMul64 = sizeof(T) == 8 && !TROPICAL_CPU_HAS_MUL64;
    static constexpr int kTemporaries = MinMaxTemporaries<T>() + (kMul64 ? 4 : 0);
    static T Zero() { return T(0); }
    static T Init() { return Zero(); }
    static T Stage(T x) { return x; }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        if constexpr (sizeof(T) == 8) return MulLow64(a, b);
        else return hn::Mul(a, b);
    }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D, hn::Vec<D> acc) {
        return acc;
    }
    static T Finish(T acc) { return acc; }
};

// ---------------------------------------------------------------------------------------------
// MaxMin and MinMax: (x) is min or max, which neither overflows nor makes a NaN out of infinities,
// so there is no sentinel: the zero (an infinity, or the integer type's extreme) absorbs by itself
// and every value is a valid input. Only a NaN input makes a NaN term.

template <class T, bool kMax>
struct BottleneckRing : Order<T, kMax> {
    static constexpr bool kMayNaN = std::is_floating_point_v<T>;
    static constexpr bool kTimesDropsNaN = kMayNaN;
    // (+) and (x) are both min/max, each a compare and a blend for emulated 64-bit integers.
    static constexpr int kTemporaries = 2 * MinMaxTemporaries<T>();
    static T Zero() {
        if constexpr (std::is_floating_point_v<T>) return kMax ? -kInfinity<T> : kInfinity<T>;
        else return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
    static T Init() { return Zero(); }
    // Floats: -0 read as +0, as everywhere; min and max of +0 values keep them +0.
    static T Stage(T x) {
        if constexpr (std::is_floating_point_v<T>) return x + T(0);
        else return x;
    }
    static bool Unsafe(T x) { return x != x; }
    template <class V>
    static HWY_INLINE V Times(V a, V b) {
        if constexpr (kMax) return hn::Min(a, b);  // MaxMin: (+) max, (x) min
        else return hn::Max(a, b);
    }
    template <class D>
    static HWY_INLINE hn::Vec<D> Finish(D, hn::Vec<D> acc) {
        return acc;
    }
    static T Finish(T acc) { return acc; }
};

template <class T>
using MaxMinRing = BottleneckRing<T, true>;
template <class T>
using MinMaxRing = BottleneckRing<T, false>;

// The ring of semiring S for element type T.
template <class T>
using MaxPlusRing = std::conditional_t<std::is_floating_point_v<T>, MaxPlusFloat<T>, MaxPlusInt<T>>;
template <class T>
using MinPlusRing = std::conditional_t<std::is_floating_point_v<T>, MinPlusFloat<T>, MinPlusInt<T>>;
template <class T>
using MaxMulRing = std::conditional_t<std::is_floating_point_v<T>, MaxMulFloat<T>, MaxMulInt<T>>;

// ---------------------------------------------------------------------------------------------
// What the kernels build from a ring.

// a (x) b as the kernels take it: in the NaN-safe ones (kNaN), NaN where an input is NaN.
template <class R, bool kNaN, class V>
HWY_INLINE V Term(V a, V b) {
    const V t = R::Times(a, b);
    if constexpr (kNaN && R::kTimesDropsNaN) return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, t));
    else return t;
}

// acc (+) t. Without NaN terms the plain Pick; with them, a compare-select that lets a NaN term in
// and never lets a NaN accumulator out (every target's Max treats NaN differently).
template <class R, bool kNaN, class V>
HWY_INLINE V Accumulate(V t, V acc) {
    if constexpr (kNaN) return hn::IfThenElse(hn::Or(R::Better(t, acc), hn::IsNaN(t)), t, acc);
    else return R::Pick(t, acc);
}

// The exact x (+) y of the reference: a NaN x, else a NaN y, else the better, x on ties.
template <class R, class V>
HWY_INLINE V Plus(V x, V y) {
    V r = hn::IfThenElse(R::Better(y, x), y, x);
    if constexpr (R::kMayNaN) r = hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
    return r;
}

template <class T>
HWY_INLINE bool IsNaN(T x) {
    if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
}

template <class R, class T>
HWY_INLINE T PlusScalar(T x, T y) {
    if (IsNaN(x)) return x;
    if (IsNaN(y)) return y;
    return R::Better(y, x) ? y : x;
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_RING_INL_H_
