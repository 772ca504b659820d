// tropical-gemm's device code, the piece after semiring.cuh: the 16-bit element types (bfloat16,
// float16, int16) and their arithmetic on pairs, two elements in one 32-bit register, which Hopper
// runs at the 32-bit instructions' rate: two terms per HADD2 and HMNMX2 (bf16, f16), or per DPX
// VIADDMNMX (add.s16x2 then max.s16x2, fused by ptxas on sm_90) for int16.
//
// Semantics (src/reference/reference.hpp): a 16-bit float term is the exact sum or product rounded
// once to the type (what add.rn / mul.rn of a pair do); (+) selects among the terms, NaN-propagating
// (max.NaN / min.NaN); so a result is the 16-bit rounding of the exact best term. int16's MaxPlus
// and MinPlus keep semiring.cuh's sentinel scheme, at 16 bits (IntLimits<short>): the zero is staged
// as -2^14 (MaxPlus) or 2^14 - 1 (MinPlus) and finite inputs satisfy |x| <= 2^12, so no sum of two
// staged values wraps and a term with a zero in it stays beyond the threshold that every finite term
// passes.
//
// A pair's element 0 is the low half (the lower address in memory), element 1 the high half.

namespace tg {

struct bf16 {
    unsigned short bits;
};
struct f16 {
    unsigned short bits;
};

template <class T>
struct IsHalf {
    static constexpr bool value = false;
};
template <>
struct IsHalf<bf16> {
    static constexpr bool value = true;
};
template <>
struct IsHalf<f16> {
    static constexpr bool value = true;
};

// ---------------------------------------------------------------------------------------------
// Elements and pairs.

__device__ __forceinline__ unsigned short bits16(bf16 x) { return x.bits; }
__device__ __forceinline__ unsigned short bits16(f16 x) { return x.bits; }
__device__ __forceinline__ unsigned short bits16(short x) { return static_cast<unsigned short>(x); }
template <class T>
__device__ __forceinline__ T from_bits16(unsigned short b) {
    if constexpr (IsSame<T, short>::value) return static_cast<short>(b);
    else return T{b};
}

// (x, y) as a pair, and x in both halves.
template <class T>
__device__ __forceinline__ unsigned pair_of(T x, T y) {
    return static_cast<unsigned>(bits16(x)) | (static_cast<unsigned>(bits16(y)) << 16);
}
__device__ __forceinline__ unsigned both_halves(unsigned short x) { return __byte_perm(x, 0, 0x1010); }
template <class T>
__device__ __forceinline__ T half_of(unsigned pair, int lane) {
    return from_bits16<T>(static_cast<unsigned short>(lane == 0 ? pair & 0xffffu : pair >> 16));
}

// A 16-bit float as a float (exactly) and a float rounded to it (to nearest even).
__device__ __forceinline__ float to_float(bf16 x) { return __int_as_float(static_cast<int>(x.bits) << 16); }
__device__ __forceinline__ float to_float(f16 x) {
#ifdef __CUDA_ARCH__
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
    return f;
#else
    return tg_emu::f16_to_float(x.bits);  // tests/support/device_emulation.hpp
#endif
}
template <class T>
__device__ __forceinline__ T from_float(float f);
template <>
__device__ __forceinline__ bf16 from_float<bf16>(float f) {
#ifdef __CUDA_ARCH__
    unsigned short b;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return bf16{b};
#else
    return bf16{tg_emu::bf16_from_float(f)};
#endif
}
template <>
__device__ __forceinline__ f16 from_float<f16>(float f) {
#ifdef __CUDA_ARCH__
    unsigned short b;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
    return f16{b};
#else
    return f16{tg_emu::f16_from_float(f)};
#endif
}

// The host's twin of a pair instruction: op on each half through float, rounded once (the halves'
// exact sums and products round to 16 bits as float's single rounding does, float carrying more than
// twice their digits), or on each half as int16 that wraps as the hardware's does.
#ifndef __CUDA_ARCH__
template <class T, class Op>
unsigned each_half(unsigned x, unsigned y, Op op) {
    unsigned out = 0;
    for (int lane = 0; lane < 2; ++lane) {
        const T a = half_of<T>(x, lane), b = half_of<T>(y, lane);
        T r;
        if constexpr (IsSame<T, short>::value) r = static_cast<short>(op(static_cast<int>(a), static_cast<int>(b)));
        else r = from_float<T>(op(to_float(a), to_float(b)));
        out |= static_cast<unsigned>(bits16(r)) << (16 * lane);
    }
    return out;
}
// NaN-propagating max and min of floats, as max.NaN and min.NaN.
inline float emu_max_nan(float x, float y) { return x != x || y != y ? x + y : (x > y ? x : y); }
inline float emu_min_nan(float x, float y) { return x != x || y != y ? x + y : (x < y ? x : y); }
#endif

// Pair arithmetic, by element type: add, mul (floats), NaN-propagating max and min (floats), max and
// min (int16). sm_80 has the bf16 pairs' fma but not their add or mul: a + b is fma(a, 1, b) and a * b
// is fma(a, b, -0), both rounded once.
template <class T>
struct Pairs;

template <>
struct Pairs<bf16> {
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        unsigned r;
        asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#elif defined(__CUDA_ARCH__)
        unsigned r;
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(0x3f803f80u), "r"(b));
        return r;
#else
        return each_half<bf16>(a, b, [](float x, float y) { return x + y; });
#endif
    }
    static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        unsigned r;
        asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#elif defined(__CUDA_ARCH__)
        unsigned r;
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0x80008000u));
        return r;
#else
        return each_half<bf16>(a, b, [](float x, float y) { return x * y; });
#endif
    }
    static __device__ __forceinline__ unsigned max(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<bf16>(a, b, emu_max_nan);
#endif
    }
    static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<bf16>(a, b, emu_min_nan);
#endif
    }
};

template <>
struct Pairs<f16> {
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<f16>(a, b, [](float x, float y) { return x + y; });
#endif
    }
    static __device__ __forceinline__ unsigned mul(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<f16>(a, b, [](float x, float y) { return x * y; });
#endif
    }
    static __device__ __forceinline__ unsigned max(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<f16>(a, b, emu_max_nan);
#endif
    }
    static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) {
#ifdef __CUDA_ARCH__
        unsigned r;
        asm("min.NaN.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
#else
        return each_half<f16>(a, b, emu_min_nan);
#endif
    }
};

// int16 pairs: add wraps (the staging keeps every sum in range); sm_90 has the pair instructions
// (add.s16x2 followed by max.s16x2 is one VIADDMNMX), earlier GPUs take each half apart.
template <>
struct Pairs<short> {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) {
        unsigned r;
        asm("add.s16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
    }
    static __device__ __forceinline__ unsigned max(unsigned a, unsigned b) {
        unsigned r;
        asm("max.s16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
    }
    static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) {
        unsigned r;
        asm("min.s16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
        return r;
    }
#else
    template <class Op>
    static __device__ __forceinline__ unsigned lanes(unsigned a, unsigned b, Op op) {
        const int lo = op(static_cast<short>(a & 0xffffu), static_cast<short>(b & 0xffffu));
        const int hi = op(static_cast<short>(a >> 16), static_cast<short>(b >> 16));
        return (static_cast<unsigned>(lo) & 0xffffu) | (static_cast<unsigned>(hi) << 16);
    }
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) {
        return lanes(a, b, [](int x, int y) { return x + y; });
    }
    static __device__ __forceinline__ unsigned max(unsigned a, unsigned b) {
        return lanes(a, b, [](int x, int y) { return x > y ? x : y; });
    }
    static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) {
        return lanes(a, b, [](int x, int y) { return x < y ? x : y; });
    }
#endif
};

// ---------------------------------------------------------------------------------------------
// The semirings on 16-bit pairs: what gemm_packed16 (kernels/packed16_loop.cuh) needs.
//   zero()            the exact zero, an element (what K = 0 produces; the staging's padding)
//   stage(x)          the element kept in shared memory for input x (int16: the zero clamped to its
//                     sentinel; floats: as given)
//   init()            the accumulator's start, a pair
//   mac(a, b, acc)    acc (+) a (x) b on pairs of staged values
//   finish(acc)       the exact results from an accumulator pair (floats: -0 becomes +0)
//   plus(x, y)        exact, NaN-propagating (+) of two elements (accumulate into C)

template <class S, class T>
struct PairRing;

// 16-bit floats: a ring is its (+) (max or min), its zero's bits and its (x); (+) of two elements goes
// through float (exact: both are elements).
template <class T>
struct HalfLimits;
template <>
struct HalfLimits<bf16> {
    static constexpr unsigned short inf = 0x7f80, minus_inf = 0xff80;
};
template <>
struct HalfLimits<f16> {
    static constexpr unsigned short inf = 0x7c00, minus_inf = 0xfc00;
};

template <class T, bool MAX, unsigned short ZERO>
struct HalfRing {
    using P = Pairs<T>;
    static __device__ __forceinline__ T zero() { return T{ZERO}; }
    static __device__ __forceinline__ T stage(T x) { return x; }
    static __device__ __forceinline__ unsigned init() { return both_halves(ZERO); }
    static __device__ __forceinline__ unsigned pick(unsigned x, unsigned y) {
        return MAX ? P::max(x, y) : P::min(x, y);
    }
    static __device__ __forceinline__ unsigned finish(unsigned acc) { return P::add(acc, 0u); }
    static __device__ __forceinline__ T plus(T x, T y) {
        const float a = to_float(x), b = to_float(y);
        return from_float<T>((MAX ? max_nan(a, b) : min_nan(a, b)) + 0.0f);
    }
};

template <class T>
struct PairRing<MaxPlus, T> : HalfRing<T, true, HalfLimits<T>::minus_inf> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return PairRing::pick(acc, Pairs<T>::add(a, b));
    }
};
template <class T>
struct PairRing<MinPlus, T> : HalfRing<T, false, HalfLimits<T>::inf> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return PairRing::pick(acc, Pairs<T>::add(a, b));
    }
};
// Starting at the zero 0 makes negative inputs (outside the domain) give max(0, max_k a*b), as in f32.
template <class T>
struct PairRing<MaxMul, T> : HalfRing<T, true, 0> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return PairRing::pick(acc, Pairs<T>::mul(a, b));
    }
};
template <class T>
struct PairRing<MaxMin, T> : HalfRing<T, true, HalfLimits<T>::minus_inf> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return PairRing::pick(acc, Pairs<T>::min(a, b));
    }
};
template <class T>
struct PairRing<MinMax, T> : HalfRing<T, false, HalfLimits<T>::inf> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return PairRing::pick(acc, Pairs<T>::max(a, b));
    }
};

// int16: semiring.cuh's integer rings (IntLimits<short>: the sentinel scheme of MaxPlus and MinPlus,
// zeros that absorb by themselves for MaxMin and MinMax) for the elements, on pairs for the terms.
template <class S>
struct Int16Ring : Ring<S, short, true> {
    using R = Ring<S, short, true>;
    static __device__ __forceinline__ unsigned init() { return both_halves(bits16(R::init())); }
    static __device__ __forceinline__ unsigned finish(unsigned acc) {
        return pair_of(R::finish(half_of<short>(acc, 0)), R::finish(half_of<short>(acc, 1)));
    }
};
template <>
struct PairRing<MaxPlus, short> : Int16Ring<MaxPlus> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return Pairs<short>::max(Pairs<short>::add(a, b), acc);
    }
};
template <>
struct PairRing<MinPlus, short> : Int16Ring<MinPlus> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return Pairs<short>::min(Pairs<short>::add(a, b), acc);
    }
};
template <>
struct PairRing<MaxMin, short> : Int16Ring<MaxMin> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return Pairs<short>::max(Pairs<short>::min(a, b), acc);
    }
};
template <>
struct PairRing<MinMax, short> : Int16Ring<MinMax> {
    static __device__ __forceinline__ unsigned mac(unsigned a, unsigned b, unsigned acc) {
        return Pairs<short>::min(Pairs<short>::max(a, b), acc);
    }
};

}  // namespace tg
