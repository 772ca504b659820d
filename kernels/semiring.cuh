// tropical-gemm's device code, piece 1 of 5: the semiring algebra (scalar building blocks, the
// integer "infinity" scheme and one Ring per semiring and type). The build joins the pieces in
// order after kernels/kernel_params.h; NVRTC compiles the result with no system headers, so no
// piece includes anything or uses std::.
//
// Semantics (the same as src/reference/reference.hpp, which states them in full):
//   C[i,j] = (+)_k A[i,k] (x) B[k,j]; K = 0 gives the zero; accumulate gives C = C_old (+) that.
//   MaxPlus (max, +, -inf, 0), MinPlus (min, +, +inf, 0), MaxMul (max, *, 0, 1).
//   NaN in any term (or in C_old) makes the result NaN. Integer zeros are exact and absorbing.

namespace tg {

template <class T>
__device__ __forceinline__ T* element(const TgOperand& o, long long b, long long i, long long j) {
    return static_cast<T*>(o.ptr) + (b * o.batch_stride + i * o.row_stride + j * o.col_stride);
}

// ---------------------------------------------------------------------------------------------
// Scalar building blocks.

__device__ __forceinline__ float infinity(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double infinity(double) { return __longlong_as_double(0x7ff0000000000000LL); }

// NaN-propagating max/min. sm_80 has it for f32 as one FMNMX, whose NaN result is always the
// canonical NaN. The f32 fallback keeps the first NaN as it is, so that for f32 the result's bits
// change exactly when y is strictly better or the first NaN (the argmax path relies on it). f64 has
// no such instruction and fmax() costs about 8 instructions: the compare-select costs 5 (one
// predicate more than a plain compare-select) and may swap one NaN for another, which is harmless.
__device__ __forceinline__ float max_nan(float x, float y) {
#if __CUDA_ARCH__ >= 800
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    return r;
#else
    return (y > x || (y != y && x == x)) ? y : x;
#endif
}
__device__ __forceinline__ float min_nan(float x, float y) {
#if __CUDA_ARCH__ >= 800
    float r;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
    return r;
#else
    return (y < x || (y != y && x == x)) ? y : x;
#endif
}
__device__ __forceinline__ double max_nan(double x, double y) { return (y > x || y != y) ? y : x; }
__device__ __forceinline__ double min_nan(double x, double y) { return (y < x || y != y) ? y : x; }

__device__ __forceinline__ int bits(float x) { return __float_as_int(x); }
__device__ __forceinline__ int bits(int x) { return x; }
__device__ __forceinline__ float from_bits(int x, float) { return __int_as_float(x); }
__device__ __forceinline__ int from_bits(int x, int) { return x; }

// *c = max(*c, v) and min(*c, v) as one atomic, NaN winning, for the split-K epilogue. A float's bits
// order like the float among non-negative values as signed integers and among negative values in
// reverse as unsigned ones, so one integer atomic of the matching kind does it; a NaN becomes the
// NaN that wins both comparisons (max: 0x7fffffff, min: 0xffffffff). C starts at the zero (-inf,
// +inf or +0) and never holds -0 (results are normalised), so every stored value follows the rule.
__device__ __forceinline__ void atomic_max_nan(float* c, float v) {
    const int b = v != v ? 0x7fffffff : __float_as_int(v);
    if (b >= 0) atomicMax(reinterpret_cast<int*>(c), b);
    else atomicMin(reinterpret_cast<unsigned*>(c), static_cast<unsigned>(b));
}
__device__ __forceinline__ void atomic_min_nan(float* c, float v) {
    const int b = v != v ? -1 : __float_as_int(v);
    if (b >= 0) atomicMin(reinterpret_cast<int*>(c), b);
    else atomicMax(reinterpret_cast<unsigned*>(c), static_cast<unsigned>(b));
}
__device__ __forceinline__ void atomic_max_nan(int* c, int v) { atomicMax(c, v); }
__device__ __forceinline__ void atomic_min_nan(int* c, int v) { atomicMin(c, v); }

// max(a + b, acc) and min(a + b, acc): one DPX instruction for i32 on sm_90 (emulated elsewhere).
__device__ __forceinline__ int add_max(int a, int b, int acc) { return __viaddmax_s32(a, b, acc); }
__device__ __forceinline__ int add_min(int a, int b, int acc) { return __viaddmin_s32(a, b, acc); }
__device__ __forceinline__ long long add_max(long long a, long long b, long long acc) {
    const long long s = a + b;
    return s > acc ? s : acc;
}
__device__ __forceinline__ long long add_min(long long a, long long b, long long acc) {
    const long long s = a + b;
    return s < acc ? s : acc;
}

// Integer "infinity" scheme. Inputs are staged with the zero clamped to a sentinel S of magnitude
// 2^30 (i64: 2^62), so the add never wraps; finite inputs satisfy |x| <= RANGE = 2^28 (i64: 2^60).
// A term that involves a zero is then at most S + RANGE (MaxPlus) and every finite term is above it,
// so the accumulator starts at that threshold and anything still at or below it becomes the exact zero.
template <class T>
struct IntLimits;
template <>
struct IntLimits<int> {
    static constexpr int lowest = -2147483647 - 1;
    static constexpr int highest = 2147483647;
    static constexpr int sentinel = 1 << 30;
    static constexpr int range = 1 << 28;
};
// int16 (kernels/packed16.cuh, on pairs): 2 * (-2^14) is the type's lowest, 2 * (2^14 - 1) below its highest.
template <>
struct IntLimits<short> {
    static constexpr short lowest = -32767 - 1;
    static constexpr short highest = 32767;
    static constexpr short sentinel = 1 << 14;
    static constexpr short range = 1 << 12;
};
template <>
struct IntLimits<long long> {
    static constexpr long long lowest = -9223372036854775807LL - 1;
    static constexpr long long highest = 9223372036854775807LL;
    static constexpr long long sentinel = 1LL << 62;
    static constexpr long long range = 1LL << 60;
};

template <class T>
struct IsInt {
    static constexpr bool value = false;
};
template <>
struct IsInt<int> {
    static constexpr bool value = true;
};
template <>
struct IsInt<long long> {
    static constexpr bool value = true;
};
template <>
struct IsInt<short> {
    static constexpr bool value = true;
};

template <class A, class B>
struct IsSame {
    static constexpr bool value = false;
};
template <class A>
struct IsSame<A, A> {
    static constexpr bool value = true;
};

// ---------------------------------------------------------------------------------------------
// Semirings. Each Ring<S, T> tells the main loop:
//   zero()          the exact semiring zero (what K = 0 produces)
//   stage(x)        the value kept in shared memory for input x (floats: -0 becomes +0, so that no
//                   term is -0 and equal values have equal bits; see the argmax path)
//   init()          the accumulator's start
//   mac(a, b, acc)  acc (+) a (x) b on staged values, NaN-propagating
//   times(a, b)     a (x) b on staged values (argmax path)
//   beats(s, acc)   s replaces acc in the argmax path: strictly better, or the first NaN
//   finish(acc)     the exact result from the accumulator
//   plus(x, y)      exact, NaN-propagating (+) (accumulate into C)
//   plus_atomic(c, v) *c = *c (+) v as one atomic (32-bit types; split-K)
// Padding outside the matrices is stage(zero()): pad (x) pad never beats any accumulator.

struct MaxPlus {};
struct MinPlus {};
struct MaxMul {};
struct MaxMin {};
struct MinMax {};

template <class S, class T, bool Int = IsInt<T>::value>
struct Ring;

template <class T>
struct Ring<MaxPlus, T, false> {
    // Without NaN in the terms: a compare-select whose ordered compare also keeps a NaN accumulator.
    static __device__ __forceinline__ T mac_ordered(T a, T b, T acc) {
        const T s = a + b;
        return s > acc ? s : acc;
    }
    // x may make a NaN term (NaN, or the infinity opposite to the zero that pads the tiles).
    static __device__ __forceinline__ bool unsafe(T x) { return !(x < infinity(T())); }
    static __device__ __forceinline__ T zero() { return -infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return max_nan(acc, a + b); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return max_nan(x, y); }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

template <class T>
struct Ring<MinPlus, T, false> {
    // Without NaN in the terms: a compare-select whose ordered compare also keeps a NaN accumulator.
    static __device__ __forceinline__ T mac_ordered(T a, T b, T acc) {
        const T s = a + b;
        return s < acc ? s : acc;
    }
    // x may make a NaN term (NaN, or the infinity opposite to the zero that pads the tiles).
    static __device__ __forceinline__ bool unsafe(T x) { return !(x > -infinity(T())); }
    static __device__ __forceinline__ T zero() { return infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return min_nan(acc, a + b); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s < acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return min_nan(x, y); }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_min_nan(c, v); }
};

// Starting at the zero 0 makes negative inputs (outside the domain) give max(0, max_k a*b).
template <class T>
struct Ring<MaxMul, T, false> {
    static __device__ __forceinline__ T mac_ordered(T a, T b, T acc) {
        const T s = a * b;
        return s > acc ? s : acc;
    }
    static __device__ __forceinline__ bool unsafe(T x) { return !(fabs(x) < infinity(T())); }
    static __device__ __forceinline__ T zero() { return T(0); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return max_nan(acc, a * b); }
    static __device__ __forceinline__ T times(T a, T b) { return a * b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return max_nan(x, y); }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

template <class T>
struct Ring<MaxPlus, T, true> {
    static constexpr T sentinel = -IntLimits<T>::sentinel;
    static constexpr T threshold = sentinel + IntLimits<T>::range;
    static __device__ __forceinline__ T zero() { return IntLimits<T>::lowest; }
    static __device__ __forceinline__ T stage(T x) { return x > sentinel ? x : sentinel; }
    static __device__ __forceinline__ T init() { return threshold; }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return add_max(a, b, acc); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc; }
    static __device__ __forceinline__ T finish(T acc) { return acc > threshold ? acc : zero(); }
    static __device__ __forceinline__ T plus(T x, T y) { return x > y ? x : y; }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

template <class T>
struct Ring<MinPlus, T, true> {
    static constexpr T sentinel = IntLimits<T>::sentinel - 1;
    static constexpr T threshold = sentinel - IntLimits<T>::range;
    static __device__ __forceinline__ T zero() { return IntLimits<T>::highest; }
    static __device__ __forceinline__ T stage(T x) { return x < sentinel ? x : sentinel; }
    static __device__ __forceinline__ T init() { return threshold; }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return add_min(a, b, acc); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s < acc; }
    static __device__ __forceinline__ T finish(T acc) { return acc < threshold ? acc : zero(); }
    static __device__ __forceinline__ T plus(T x, T y) { return x < y ? x : y; }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_min_nan(c, v); }
};

// MaxMin and MinMax (bottleneck paths, fuzzy relations): (x) is min or max, which neither overflows
// nor makes a NaN out of infinities, so there is no sentinel scheme: the zero (-inf or +inf, the
// type's lowest or highest integer) absorbs by itself and every input value is valid. Two min/max
// per term, NaN-propagating for floats.
template <class T>
struct Ring<MaxMin, T, false> {
    static __device__ __forceinline__ T mac_ordered(T a, T b, T acc) {
        const T s = a < b ? a : b;
        return s > acc ? s : acc;
    }
    // Only a NaN input makes a NaN term: min and max of infinities are infinities.
    static __device__ __forceinline__ bool unsafe(T x) { return x != x; }
    static __device__ __forceinline__ T zero() { return -infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return max_nan(acc, min_nan(a, b)); }
    static __device__ __forceinline__ T times(T a, T b) { return min_nan(a, b); }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return max_nan(x, y); }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

template <class T>
struct Ring<MinMax, T, false> {
    static __device__ __forceinline__ T mac_ordered(T a, T b, T acc) {
        const T s = a > b ? a : b;
        return s < acc ? s : acc;
    }
    static __device__ __forceinline__ bool unsafe(T x) { return x != x; }
    static __device__ __forceinline__ T zero() { return infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return min_nan(acc, max_nan(a, b)); }
    static __device__ __forceinline__ T times(T a, T b) { return max_nan(a, b); }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s < acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return min_nan(x, y); }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_min_nan(c, v); }
};

template <class T>
struct Ring<MaxMin, T, true> {
    static __device__ __forceinline__ T zero() { return IntLimits<T>::lowest; }
    static __device__ __forceinline__ T stage(T x) { return x; }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) {
        const T s = a < b ? a : b;
        return s > acc ? s : acc;
    }
    static __device__ __forceinline__ T times(T a, T b) { return a < b ? a : b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc; }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return x > y ? x : y; }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

template <class T>
struct Ring<MinMax, T, true> {
    static __device__ __forceinline__ T zero() { return IntLimits<T>::highest; }
    static __device__ __forceinline__ T stage(T x) { return x; }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) {
        const T s = a > b ? a : b;
        return s < acc ? s : acc;
    }
    static __device__ __forceinline__ T times(T a, T b) { return a > b ? a : b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s < acc; }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return x < y ? x : y; }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_min_nan(c, v); }
};

// The zero 0 absorbs by itself; the documented range keeps every product below overflow.
template <class T>
struct Ring<MaxMul, T, true> {
    static __device__ __forceinline__ T zero() { return T(0); }
    static __device__ __forceinline__ T stage(T x) { return x; }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) {
        const T s = a * b;
        return s > acc ? s : acc;
    }
    static __device__ __forceinline__ T times(T a, T b) { return a * b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc; }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return x > y ? x : y; }
    static __device__ __forceinline__ void plus_atomic(T* c, T v) { atomic_max_nan(c, v); }
};

}  // namespace tg
