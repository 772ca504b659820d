// tropical-gemm: every CUDA kernel of the library.
//
// The host compiles this file with NVRTC one kernel at a time: the preamble (everything before the
// first marker line) followed by that kernel's fragment. A fragment begins with a marker line, a line
// comment holding "@kernel name=<entry> threads=<block threads> tile_m=<rows of C per block>
// tile_n=<cols of C per block>" (see the fragments below), which the host parses to launch it: block =
// threads, grid = (ceil(N/tile_n), min(ceil(M/tile_m), 65535), min(batch, 65535)). Kernels loop over
// M-tiles, N-tiles and batches, so any grid is correct. No #include and no std::: NVRTC compiles this
// with no system headers.
//
// Semantics (the same as src/reference/reference.hpp, which states them in full):
//   C[i,j] = (+)_k A[i,k] (x) B[k,j]; K = 0 gives the zero; accumulate gives C = C_old (+) that.
//   MaxPlus (max, +, -inf, 0), MinPlus (min, +, +inf, 0), MaxMul (max, *, 0, 1).
//   NaN in any term (or in C_old) makes the result NaN. Integer zeros are exact and absorbing.

// ---------------------------------------------------------------------------------------------
// Kernel parameters. The host mirrors these byte for byte in src/gemm/kernel_params.hpp.
// Element (b,i,j) of an operand is ((T*)ptr)[b*batch_stride + i*row_stride + j*col_stride].
struct TgOperand {
    void* ptr;
    long long row_stride;
    long long col_stride;
    long long batch_stride;
};

// a: M x K, b: K x N, c: M x N, argmax: M x N int32 (ptr null unless the kernel tracks it).
// k_splits > 1 (32-bit products without argmax or accumulate): K is cut into that many chunks, each
// computed by its own blocks (blockIdx.z runs over batch x k_splits) and combined into C with
// atomics; C must hold the semiring's zero before the launch (the host fills it).
struct TgGemmParams {
    TgOperand a, b, c, argmax;
    long long m, n, k, batch;
    int accumulate;
    int k_splits;
};

// For every (b,i,j) whose argmax k is in [0, K):
//   grad_a: grad[i,k] += grad_c[i,j] * (multiply_by_other ? other[k,j] : 1)   (other = B)
//   grad_b: grad[k,j] += grad_c[i,j] * (multiply_by_other ? other[i,k] : 1)   (other = A)
// overwrite: grad = route(...) instead of grad += (only with the shared-memory path; see backward()).
struct TgBackwardParams {
    TgOperand grad_c, argmax, other, grad;
    long long m, n, k, batch;
    int multiply_by_other;
    int overwrite;
};

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

// ---------------------------------------------------------------------------------------------
// The tiled main loop, shared by every forward kernel.
//
// A block computes a BM x BN tile of C in K-slices of BK, staged in shared memory as [k][row of A]
// and [k][column of B], in two buffers, so one barrier per slice. While slice s is computed, slice
// s+1 travels from global memory through registers: its loads are issued before the compute and
// their values stored to the other buffer after it, so the compute hides their latency. Each thread
// owns TM x TN results; its rows (and columns) come in groups of VEC adjacent elements, GROUP_M
// (GROUP_N) apart, read with 128-bit shared loads that fall in distinct banks.

// BK: k rows per shared slice (one barrier each); SK: k rows each thread carries through registers
// at a time (a slice is fetched in BK / SK stages, to keep those registers few).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int SK_ = BK_>
struct Tile {
    static constexpr int bm = BM_, bn = BN_, bk = BK_, tm = TM_, tn = TN_, sk = SK_;
    static constexpr int threads = (BM_ / TM_) * (BN_ / TN_);
};

// Gemm tiles: 8x8 results per thread for 32-bit types (a 4x4 tile saturates shared memory before
// the ALUs), 128 registers so that two blocks share a multiprocessor; 4x4 for i64 and f64.
// bench/NOTES.md has the measurements behind each choice.
using Gemm32 = Tile<128, 128, 16, 8, 8, 8>; // 256 threads
// f32 runs as fast with slices of 8 (measured on the H200; i32 loses 3% there) and its fragments
// then compile in two thirds of the time.
using GemmF32 = Tile<128, 128, 8, 8, 8, 8>; // 256 threads
using Gemm64 = Tile<64, 64, 8, 4, 4>;       // 256 threads
// f64 at 4x4 with 120 registers (two blocks of 256 threads per multiprocessor) measured 1.5% faster
// on the H200 than 8x4 with 168 (three blocks of 128): ptxas overlaps its compare-selects better
// (5.4 instead of 9.8 stall cycles per term and warp in the SASS). Shared memory then delivers
// 4 bytes per term, 73% of its peak at 12 Tops.
using GemmF64 = Tile<64, 64, 8, 4, 4>;      // 256 threads
// Argmax of 32-bit types tracks slices (see gemm()): per result a running and a slice accumulator
// and the slice index, 96 registers at 8x4, so 8x4 per thread and three blocks of 128 threads.
using Argmax32 = Tile<64, 64, 16, 8, 4, 8>;  // 128 threads
// Batched tiles, for many products of 64..256: one 64x64 tile keeps blocks small and plentiful.
using Batched32 = Tile<64, 64, 8, 8, 8>;    // 64 threads
using Batched64 = Tile<64, 64, 8, 4, 4>;    // 256 threads

template <class T>
struct alignas(16) Vec16 {
    T v[16 / sizeof(T)];
};

// x, as a value the compiler cannot reason about (nor hoist what depends on it out of a loop).
__device__ __forceinline__ int opaque(int x) {
    asm volatile("" : "+r"(x));
    return x;
}
__device__ __forceinline__ long long opaque(long long x) {
    asm volatile("" : "+l"(x));
    return x;
}

// A count of remaining elements, clamped into int range (tiles are far smaller than 2^30).
__device__ __forceinline__ int left_of(long long x) { return x < 0 ? 0 : (x > (1LL << 30) ? (1 << 30) : static_cast<int>(x)); }

// One operand's global -> shared staging. Each thread moves VECS 16-byte vectors per K-slice. A
// vector runs along the operand's contiguous dimension: k for a row-major A or a column-major B, the
// outer dimension (rows of A, columns of B) otherwise. Where the operand is aligned for it a vector
// is one 128-bit load, else (and at the edges of the matrix) VEC scalar loads. Vectors along k go
// to shared memory as VEC scalar stores down the k rows, a warp covering 16 outer indices x 2
// vectors, so that the stores fall in distinct banks; vectors along the outer dimension go as one
// 128-bit store, a warp covering one k row. Shared rows are padded by VEC elements.
// Only the pointers and shared offsets live in registers; the rest is recomputed from the kernel
// parameters where needed, to leave the registers to the accumulators.
template <class T, int OUTER, int BK, int THREADS>
struct Stager {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int LD = OUTER + VEC;
    static constexpr int VECS = OUTER * BK / (VEC * THREADS);
    static_assert(VECS >= 1 && OUTER * BK == VECS * VEC * THREADS, "staging map");
    static_assert((BK / VEC) % 2 == 0 && OUTER % VEC == 0, "staging map");

    const T* ptr[VECS];  // element 0 of each vector in the current slice
    int smem[VECS];      // shared offset of element 0

    static __device__ __forceinline__ bool k_along(long long outer_stride, long long k_stride) {
        return k_stride == 1 || outer_stride != 1;
    }
    static __device__ __forceinline__ bool vec_ok(const T* base, long long outer_stride, long long k_stride) {
        const bool ka = k_along(outer_stride, k_stride);
        return (ka ? k_stride : outer_stride) == 1 && (ka ? outer_stride : k_stride) % VEC == 0 &&
               reinterpret_cast<unsigned long long>(base) % 16 == 0;
    }
    // In-tile coordinates of vector r's element 0.
    static __device__ __forceinline__ void place(bool ka, int r, int& o, int& k, int tid = threadIdx.x) {
        const int v = r * THREADS + tid;
        if (ka) {
            const int rest = v >> 1;
            o = rest % OUTER;
            k = ((v & 1) + 2 * (rest / OUTER)) * VEC;
        } else {
            o = (v % (OUTER / VEC)) * VEC;
            k = v / (OUTER / VEC);
        }
    }

    __device__ __forceinline__ Stager(const T* base, long long outer_stride, long long k_stride, long long outer_begin) {
        const bool ka = k_along(outer_stride, k_stride);
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            int o, k;
            place(ka, r, o, k);
            ptr[r] = base + (outer_begin + o) * outer_stride + k * k_stride;
            smem[r] = k * LD + o;
        }
    }

    // Raw values, the semiring's zero outside the matrix (outer_left, k_left: what remains of each
    // dimension from this tile's and slice's first index); staging waits for stash(). fast: the
    // whole slice lies inside the matrix and vec_ok (the caller knows it for the block).
    template <class R>
    __device__ __forceinline__ void fetch(Vec16<T> (&regs)[VECS], bool fast, long long outer_stride, long long k_stride,
                                          long long outer_left, long long k_left) const {
        if (fast) {
#pragma unroll
            for (int r = 0; r < VECS; ++r) regs[r] = *reinterpret_cast<const Vec16<T>*>(ptr[r]);
            return;
        }
        // Everything of this rare path is computed here from values the compiler cannot see
        // through, so that none of it is hoisted into the registers that the main loop needs.
        outer_stride = opaque(outer_stride);
        k_stride = opaque(k_stride);
        outer_left = opaque(outer_left);
        k_left = opaque(k_left);
        const bool ka = k_along(outer_stride, k_stride);
        const bool vec = vec_ok(ptr[0], outer_stride, k_stride);
        const long long cstride = ka ? k_stride : outer_stride;
        const int ol = left_of(outer_left), kl = left_of(k_left);
        const int al = ka ? kl : ol, ac = ka ? ol : kl;
        const int tid = opaque(static_cast<int>(threadIdx.x));
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            int o, k;
            place(ka, r, o, k, tid);
            const int along = ka ? k : o, across = ka ? o : k;
            if (vec && along + VEC <= al && across < ac) {
                regs[r] = *reinterpret_cast<const Vec16<T>*>(ptr[r]);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    regs[r].v[e] = (along + e < al && across < ac) ? ptr[r][e * cstride] : R::zero();
            }
        }
    }

    __device__ __forceinline__ void next_stage(long long k_stride) {
#pragma unroll
        for (int r = 0; r < VECS; ++r) ptr[r] += BK * k_stride;
    }

    template <class R, bool STAGE, bool KA>
    __device__ __forceinline__ void stash_as(T* tile, const Vec16<T> (&regs)[VECS]) const {
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            Vec16<T> v;
#pragma unroll
            for (int e = 0; e < VEC; ++e) v.v[e] = STAGE ? R::stage(regs[r].v[e]) : regs[r].v[e];
            if constexpr (KA) {
#pragma unroll
                for (int e = 0; e < VEC; ++e) tile[smem[r] + e * LD] = v.v[e];
            } else {
                *reinterpret_cast<Vec16<T>*>(tile + smem[r]) = v;
            }
        }
    }
    template <class R, bool STAGE>
    __device__ __forceinline__ void stash(T* tile, const Vec16<T> (&regs)[VECS], bool ka) const {
        if (ka) stash_as<R, STAGE, true>(tile, regs);
        else stash_as<R, STAGE, false>(tile, regs);
    }
};

// One k step of the register tile: acc[i][j] = acc[i][j] (+) A[row_i, k] (x) B[k, col_j].
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N, bool ARGMAX, bool ORDERED = false>
__device__ __forceinline__ void k_step(T (&acc)[TM][TN], int (&arg)[TM][TN], const T* a_row, const T* b_row, int k) {
    constexpr int VEC = 16 / sizeof(T);
    T fa[TM], fb[TN];
#pragma unroll
    for (int g = 0; g < TM / VEC; ++g) {
        const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(a_row + g * GROUP_M);
#pragma unroll
        for (int e = 0; e < VEC; ++e) fa[g * VEC + e] = v.v[e];
    }
#pragma unroll
    for (int g = 0; g < TN / VEC; ++g) {
        const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(b_row + g * GROUP_N);
#pragma unroll
        for (int e = 0; e < VEC; ++e) fb[g * VEC + e] = v.v[e];
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            if constexpr (ARGMAX && sizeof(T) == 4) {
                // One mac and one compare: for 32-bit types the accumulator's bits change exactly
                // when the term beats it (strictly better, or the first NaN). Staging leaves no -0
                // term but MaxMul's out-of-domain 0 * -x, and FMNMX keeps the +0 accumulator then.
                const T n = R::mac(fa[i], fb[j], acc[i][j]);
                if (bits(n) != bits(acc[i][j])) arg[i][j] = k;
                acc[i][j] = n;
            } else if constexpr (ARGMAX) {
                const T t = R::times(fa[i], fb[j]);
                if (R::beats(t, acc[i][j])) {
                    acc[i][j] = t;
                    arg[i][j] = k;
                }
            } else if constexpr (ORDERED) {
                acc[i][j] = R::mac_ordered(fa[i], fb[j], acc[i][j]);
            } else {
                acc[i][j] = R::mac(fa[i], fb[j], acc[i][j]);
            }
        }
}

// The same for the argmax of 32-bit types: a slice's own accumulators, whose first term needs no
// (+) (so that the tracking costs nothing per term).
template <class R, class T, int TM, int TN, int GROUP_M, int GROUP_N, bool FIRST>
__device__ __forceinline__ void k_step_slice(T (&sacc)[TM][TN], const T* a_row, const T* b_row) {
    constexpr int VEC = 16 / sizeof(T);
    T fa[TM], fb[TN];
#pragma unroll
    for (int g = 0; g < TM / VEC; ++g) {
        const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(a_row + g * GROUP_M);
#pragma unroll
        for (int e = 0; e < VEC; ++e) fa[g * VEC + e] = v.v[e];
    }
#pragma unroll
    for (int g = 0; g < TN / VEC; ++g) {
        const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(b_row + g * GROUP_N);
#pragma unroll
        for (int e = 0; e < VEC; ++e) fb[g * VEC + e] = v.v[e];
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) sacc[i][j] = FIRST ? R::times(fa[i], fb[j]) : R::mac(fa[i], fb[j], sacc[i][j]);
}

// Bits equal, or both NaN: the term that gave an accumulator its value.
template <class T>
__device__ __forceinline__ bool same_term(T term, T acc) {
    if constexpr (IsInt<T>::value) return term == acc;
    else return bits(term) == bits(acc) || (term != term && acc != acc);
}

template <class Cfg, class S, class T, bool ARGMAX, bool SPLIT = false>
__device__ __forceinline__ void gemm(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, SK = Cfg::sk, TM = Cfg::tm, TN = Cfg::tn;
    constexpr int STAGES = BK / SK;
    static_assert(BK % SK == 0, "a slice is fetched in whole stages");
    constexpr int THREADS = Cfg::threads;
    constexpr int VEC = 16 / sizeof(T);
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageA = Stager<T, BM, SK, THREADS>;
    using StageB = Stager<T, BN, SK, THREADS>;
    constexpr int LDA = StageA::LD, LDB = StageB::LD;
    // A thread's fragment: groups of VEC adjacent rows (columns), GROUP_M (GROUP_N) apart.
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);
    // Float inputs are staged as x + 0 (no -0) only where the argmax compares bits; elsewhere the
    // result is normalised once instead, which gives the same value.
    constexpr bool STAGE = ARGMAX || IsInt<T>::value;
    // Argmax of 32-bit types: each slice's terms go to their own accumulators, combined with the
    // running ones at the end of the slice, where arg records the last slice that changed them
    // (strictly better, or the first NaN; 3 instructions per result per slice instead of 2 per
    // term). The epilogue rescans that slice's BK terms from global memory for the first k whose
    // term equals the result.
    constexpr bool TRACK = ARGMAX && sizeof(T) == 4;
    // f64 has no one-instruction NaN-propagating max: the exact compare-select costs 5 instructions
    // per term (two compares). A slice none of whose inputs can make a NaN term (the barrier ORs
    // each thread's verdict on what it staged) takes a 4-instruction compare-select instead, whose
    // ordered compare never replaces a NaN accumulator either.
    constexpr bool GUARD = !ARGMAX && sizeof(T) == 8 && !IsInt<T>::value;

    // The two double-buffered tiles; with TRACK, after the main loop, the block's (result bits,
    // slice) pairs for the rescan, in A's memory (made large enough for them).
    constexpr int A_VECS = 2 * BK * LDA / VEC, B_VECS = 2 * BK * LDB / VEC;
    constexpr int RESCAN_VECS = TRACK ? BM * BN * 8 / 16 : 0;
    __shared__ Vec16<T> smem[A_VECS > RESCAN_VECS ? A_VECS : RESCAN_VECS];
    __shared__ Vec16<T> smem_b[B_VECS];
    T* const tile_a = smem[0].v;
    T* const tile_b = smem_b[0].v;

    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const long long M = p.m, N = p.n;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    // SPLIT, the split-K kernels (see TgGemmParams): K in chunks of whole slices, so that each keeps
    // the operands' alignment. A template parameter rather than a run-time choice: the values it
    // keeps live cost the 32-bit kernels spills (i32 went from none to 120 bytes).
    static_assert(!SPLIT || (!ARGMAX && sizeof(T) == 4), "split-K combines 32-bit results with atomics");
    const long long splits = SPLIT && p.k_splits > 1 ? p.k_splits : 1;
    const long long chunk = SPLIT ? ((p.k + splits - 1) / splits + BK - 1) / BK * BK : p.k;

    for (long long z = blockIdx.z; z < p.batch * splits; z += gridDim.z) {
        const long long b = SPLIT ? z / splits : z, k_begin = SPLIT ? (z % splits) * chunk : 0;
        // This block's K: the whole of it, or its chunk (none for the last chunks when K is short).
        const long long K = SPLIT ? (p.k - k_begin < chunk ? p.k - k_begin : chunk) : p.k;
        if (SPLIT && K <= 0) continue;
        const long long slices = (K + BK - 1) / BK;
        const long long full_stages = K / SK;
        const T* const a_batch = element<T>(p.a, b, 0, k_begin);
        const T* const b_batch = element<T>(p.b, b, k_begin, 0);
        T* const c_batch = element<T>(p.c, b, 0, 0);
        const bool a_k_along = StageA::k_along(p.a.row_stride, p.a.col_stride);
        const bool b_k_along = StageB::k_along(p.b.col_stride, p.b.row_stride);
        const bool a_vec = StageA::vec_ok(a_batch, p.a.row_stride, p.a.col_stride);
        const bool b_vec = StageB::vec_ok(b_batch, p.b.col_stride, p.b.row_stride);
        const bool c_vec = !ARGMAX && p.c.col_stride == 1 && p.c.row_stride % VEC == 0 &&
                           reinterpret_cast<unsigned long long>(c_batch) % 16 == 0;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0);
                StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0);
                // Interior tiles of aligned operands load whole stages with 128-bit loads alone.
                const bool fast_tile = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;

                T acc[TM][TN];
                T sacc[TM][TN];    // dead, and removed, unless TRACK
                int arg[TM][TN];   // dead, and removed, unless ARGMAX
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        acc[i][j] = R::init();
                        arg[i][j] = -1;
                    }

                Vec16<T> ra[StageA::VECS], rb[StageB::VECS];
                // Stage q holds k in [q*SK, (q+1)*SK); slice s is stages s*STAGES .. +STAGES-1.
                auto fetch = [&](long long q) {
                    const bool fast = fast_tile && q < full_stages;
                    sa.template fetch<R>(ra, fast, p.a.row_stride, p.a.col_stride, M - m0, K - q * SK);
                    sb.template fetch<R>(rb, fast, p.b.col_stride, p.b.row_stride, N - n0, K - q * SK);
                };
                bool unsafe = false;   // dead unless GUARD
                auto stash = [&](int buf, int h) {
                    if constexpr (GUARD) {
#pragma unroll
                        for (int r = 0; r < StageA::VECS; ++r)
#pragma unroll
                            for (int e = 0; e < VEC; ++e) unsafe = unsafe || R::unsafe(ra[r].v[e]);
#pragma unroll
                        for (int r = 0; r < StageB::VECS; ++r)
#pragma unroll
                            for (int e = 0; e < VEC; ++e) unsafe = unsafe || R::unsafe(rb[r].v[e]);
                    }
                    sa.template stash<R, STAGE>(tile_a + (buf * BK + h * SK) * LDA, ra, a_k_along);
                    sb.template stash<R, STAGE>(tile_b + (buf * BK + h * SK) * LDB, rb, b_k_along);
                    sa.next_stage(p.a.col_stride);
                    sb.next_stage(p.b.row_stride);
                };
#pragma unroll
                for (int h = 0; h < STAGES; ++h) {
                    fetch(h);
                    stash(0, h);
                }
                bool exact = true;   // the slice about to be computed may make NaN terms
                if constexpr (GUARD) {
                    exact = __syncthreads_or(unsafe);
                    unsafe = false;
                } else {
                    __syncthreads();
                }
                // Slice s is read from buffer s&1 while slice s+1 travels, a stage at a time,
                // through registers into the other buffer, which everyone finished reading before
                // the previous barrier. Past the last slice the fetch reads nothing and the stash
                // is never read.
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    const T* const a_buf = tile_a + buf * BK * LDA + ty * VEC;
                    const T* const b_buf = tile_b + buf * BK * LDB + tx * VEC;
                    const int k0 = static_cast<int>(s * BK);   // argmax is int32: K < 2^31 there
#pragma unroll
                    for (int h = 0; h < STAGES; ++h) {
                        fetch((s + 1) * STAGES + h);
                        // The f64 choice is made once per stage, not per k step: a branch per k
                        // step cost 460 instead of 313 stall cycles per k step in the SASS
                        // (bench/NOTES.md).
                        if (GUARD && !exact) {
#pragma unroll
                            for (int kk = h * SK; kk < (h + 1) * SK; ++kk)
                                k_step<R, T, TM, TN, GROUP_M, GROUP_N, ARGMAX, GUARD>(acc, arg, a_buf + kk * LDA,
                                                                                      b_buf + kk * LDB, k0 + kk);
                        } else {
#pragma unroll
                            for (int kk = h * SK; kk < (h + 1) * SK; ++kk) {
                                if constexpr (TRACK) {
                                    if (kk == 0)
                                        k_step_slice<R, T, TM, TN, GROUP_M, GROUP_N, true>(sacc, a_buf, b_buf);
                                    else
                                        k_step_slice<R, T, TM, TN, GROUP_M, GROUP_N, false>(sacc, a_buf + kk * LDA,
                                                                                             b_buf + kk * LDB);
                                } else {
                                    k_step<R, T, TM, TN, GROUP_M, GROUP_N, ARGMAX>(acc, arg, a_buf + kk * LDA,
                                                                                   b_buf + kk * LDB, k0 + kk);
                                }
                            }
                        }
                        stash(buf ^ 1, h);
                    }
                    if constexpr (TRACK) {
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TN; ++j) {
                                const T n = R::plus(acc[i][j], sacc[i][j]);
                                if (bits(n) != bits(acc[i][j])) arg[i][j] = static_cast<int>(s);
                                acc[i][j] = n;
                            }
                    }
                    if constexpr (GUARD) {
                        exact = __syncthreads_or(unsafe);
                        unsafe = false;
                    } else {
                        __syncthreads();
                    }
                }

                if constexpr (SPLIT) {
                    // Split-K epilogue: the tile goes through shared memory (free after the main
                    // loop's last barrier) ROWS rows at a time, so that each warp's atomics fall on
                    // 32 consecutive elements of a row of C: 4 sectors per instruction, not 16.
                    constexpr int ROWS = A_VECS * VEC >= 32 * BN ? 32 : 16;
                    static_assert(ROWS * BN <= A_VECS * VEC && BM % ROWS == 0, "split-K staging");
                    T* const staged = tile_a;
#pragma unroll 1
                    for (int r0 = 0; r0 < BM; r0 += ROWS) {
#pragma unroll
                        for (int i = 0; i < TM; ++i) {
                            const int local = (i / VEC) * GROUP_M + ty * VEC + i % VEC - r0;
                            if (local < 0 || local >= ROWS) continue;
#pragma unroll
                            for (int g = 0; g < TN / VEC; ++g) {
                                Vec16<T> v;
#pragma unroll
                                for (int e = 0; e < VEC; ++e) v.v[e] = R::finish(acc[i][g * VEC + e]) + T(0);   // -0 -> +0
                                *reinterpret_cast<Vec16<T>*>(staged + local * BN + g * GROUP_N + tx * VEC) = v;
                            }
                        }
                        __syncthreads();
#pragma unroll 4
                        for (int o = threadIdx.x; o < ROWS * BN; o += THREADS) {
                            const long long row = m0 + r0 + o / BN, col = n0 + o % BN;
                            if (row < M && col < N) R::plus_atomic(element<T>(p.c, b, row, col), staged[o]);
                        }
                        __syncthreads();
                    }
                    continue;
                }

                // Epilogue: 128-bit stores where C is row-major and aligned, else one by one;
                // bounds-checked.
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                    if (row >= M) continue;
#pragma unroll
                    for (int g = 0; g < TN / VEC; ++g) {
                        const long long col0 = n0 + g * GROUP_N + tx * VEC;
                        Vec16<T> v;
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            v.v[e] = R::finish(acc[i][g * VEC + e]);
                            if constexpr (!STAGE) v.v[e] = v.v[e] + T(0);   // -0 -> +0
                        }
                        if (c_vec && col0 + VEC <= N) {
                            Vec16<T>* const c = reinterpret_cast<Vec16<T>*>(c_batch + row * p.c.row_stride + col0);
                            if (p.accumulate) {
                                const Vec16<T> old = *c;
#pragma unroll
                                for (int e = 0; e < VEC; ++e) v.v[e] = R::plus(old.v[e], v.v[e]);
                            }
                            *c = v;
                            continue;
                        }
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            const long long col = col0 + e;
                            if (col >= N) continue;
                            T* const c = element<T>(p.c, b, row, col);
                            T w = v.v[e];
                            if constexpr (TRACK) {
                                const int local = static_cast<int>((row - m0) * BN + (col - n0));
                                reinterpret_cast<int2*>(smem)[local] = make_int2(bits(acc[i][g * VEC + e]), arg[i][g * VEC + e]);
                            } else if constexpr (ARGMAX) {
                                *element<int>(p.argmax, b, row, col) = arg[i][g * VEC + e];
                            } else if (p.accumulate) {
                                w = R::plus(*c, w);
                            }
                            *c = w;
                        }
                    }
                }
                if constexpr (TRACK) {
                    // The rescan: each result whose last changing slice is known looks for the
                    // first k of that slice whose term equals it, all BK loads in flight at once.
                    // Threads take consecutive columns, so that the loads of B and the stores of
                    // argmax coalesce where they can.
                    __syncthreads();
#pragma unroll 1
                    for (int o = threadIdx.x; o < BM * BN; o += THREADS) {
                        const long long row = m0 + o / BN, col = n0 + o % BN;
                        if (row >= M || col >= N) continue;
                        const int2 entry = reinterpret_cast<const int2*>(smem)[o];
                        int found = entry.y;
                        if (found >= 0) {
                            const long long k0 = static_cast<long long>(found) * BK;
                            const T* const pa = element<const T>(p.a, b, row, k0);
                            const T* const pb = element<const T>(p.b, b, k0, col);
                            T ta[BK], tb[BK];
#pragma unroll
                            for (int t = 0; t < BK; ++t) {
                                const bool inside = k0 + t < K;
                                ta[t] = inside ? pa[t * p.a.col_stride] : R::zero();
                                tb[t] = inside ? pb[t * p.b.row_stride] : R::zero();
                            }
                            found = -1;
#pragma unroll
                            for (int t = BK - 1; t >= 0; --t) {
                                const T term = R::times(R::stage(ta[t]), R::stage(tb[t]));
                                if (k0 + t < K && same_term(term, from_bits(entry.x, T()))) found = static_cast<int>(k0 + t);
                            }
                        }
                        *element<int>(p.argmax, b, row, col) = found;
                    }
                }
                // Before the next tile's prologue writes the shared memory the rescan read.
                if constexpr (TRACK) __syncthreads();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Small products (a few products of at most a few hundred rows and columns): a BM x BN tile of C
// per block of 256 threads, 2 x 2 results each, K in slices of BK staged with scalar loads (any
// layout, bounds-checked) through registers into double-buffered shared memory. Many more blocks
// than the big-tile kernels give a small product, and few instructions to compile (the first call
// of a program usually compiles this kernel, so its NVRTC time is start-up time).
template <class S, class T>
__device__ __forceinline__ void gemm_small(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = 32, BN = 32, BK = 32, THREADS = 256;
    constexpr int LD = BM + 2;                      // even: 2-element fragments stay aligned
    constexpr int LOADS = BM * BK / THREADS;        // per operand and slice
    constexpr bool STAGE = IsInt<T>::value;         // floats: -0 normalised in the epilogue
    static_assert(BM == BN && BM * BK % THREADS == 0, "staging map");
    __shared__ T sa[2][BK][LD];
    __shared__ T sb[2][BK][LD];

    const int t = threadIdx.x, tx = t % (BN / 2), ty = t / (BN / 2);
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (K + BK - 1) / BK;
    // A thread's staging slots: slot r holds (outer, k) = (o + r * THREADS / BK, k) where the
    // operand is contiguous along k, else (o, k + r * THREADS / OUTER): consecutive threads walk
    // the contiguous dimension of each operand.
    const bool a_k = p.a.col_stride == 1, b_k = p.b.row_stride == 1;
    const int ao = a_k ? t / BK : t % BM, ak = a_k ? t % BK : t / BM;
    const int bo = b_k ? t / BK : t % BN, bk = b_k ? t % BK : t / BN;
    const int a_do = a_k ? THREADS / BK : 0, a_dk = a_k ? 0 : THREADS / BM;
    const int b_do = b_k ? THREADS / BK : 0, b_dk = b_k ? 0 : THREADS / BN;
    const long long a_step = a_do * p.a.row_stride + a_dk * p.a.col_stride;
    const long long b_step = b_do * p.b.col_stride + b_dk * p.b.row_stride;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                const T* pa = element<const T>(p.a, b, m0 + ao, ak);
                const T* pb = element<const T>(p.b, b, bk, n0 + bo);
                const long long a_rows = M - m0 - ao, b_cols = N - n0 - bo;
                T ra[LOADS], rb[LOADS];
                auto fetch = [&](long long k0) {
                    const long long a_ks = K - k0 - ak, b_ks = K - k0 - bk;
#pragma unroll
                    for (int r = 0; r < LOADS; ++r) {
                        ra[r] = r * a_do < a_rows && r * a_dk < a_ks ? pa[r * a_step] : R::zero();
                        rb[r] = r * b_do < b_cols && r * b_dk < b_ks ? pb[r * b_step] : R::zero();
                    }
                    pa += BK * p.a.col_stride;
                    pb += BK * p.b.row_stride;
                };
                auto stash = [&](int buf) {
#pragma unroll
                    for (int r = 0; r < LOADS; ++r) {
                        sa[buf][ak + r * a_dk][ao + r * a_do] = STAGE ? R::stage(ra[r]) : ra[r];
                        sb[buf][bk + r * b_dk][bo + r * b_do] = STAGE ? R::stage(rb[r]) : rb[r];
                    }
                };
                T acc[2][2];
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) acc[i][j] = R::init();
                fetch(0);
                stash(0);
                __syncthreads();
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    fetch((s + 1) * BK);
#pragma unroll 8
                    for (int kk = 0; kk < BK; ++kk) {
                        const T a0 = sa[buf][kk][2 * ty], a1 = sa[buf][kk][2 * ty + 1];
                        const T b0 = sb[buf][kk][2 * tx], b1 = sb[buf][kk][2 * tx + 1];
                        acc[0][0] = R::mac(a0, b0, acc[0][0]);
                        acc[0][1] = R::mac(a0, b1, acc[0][1]);
                        acc[1][0] = R::mac(a1, b0, acc[1][0]);
                        acc[1][1] = R::mac(a1, b1, acc[1][1]);
                    }
                    stash(buf ^ 1);
                    __syncthreads();
                }
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const long long row = m0 + 2 * ty + i;
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const long long col = n0 + 2 * tx + j;
                        if (row >= M || col >= N) continue;
                        T* const c = element<T>(p.c, b, row, col);
                        T v = R::finish(acc[i][j]);
                        if constexpr (!STAGE) v = v + T(0);   // -0 -> +0
                        if (p.accumulate) v = R::plus(*c, v);
                        *c = v;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Backward: route grad_C through the argmax. Two ways, chosen by the host through the dynamic
// shared memory it gives the launch:
//  - in shared memory (enough of it for K values per block): grad_A one row at a time (a block
//    reads row i of grad_C and argmax and adds into a shared row of K values; grad_B one slab of
//    32 bytes' worth of columns at a time (a block walks those columns down all rows, into a
//    shared K x slab); then the block writes the row or slab to grad once. Every byte is moved
//    once, and the additions are shared-memory atomics. With `overwrite` the result replaces grad
//    (the host then skips zeroing it); otherwise it is added.
//  - else global atomics over the elements of grad_C (grad zeroed by the host unless accumulating).
// Bytes of each row that a block of the shared-memory grad_B path takes (the host's
// kBackwardBSlabBytes): its K rows of them must fit in shared memory.
constexpr int BACKWARD_B_SLAB_BYTES = 32;

template <class T, bool GRAD_A>
__device__ __forceinline__ void backward(const TgBackwardParams& p) {
    const long long M = p.m, N = p.n, K = p.k;
    extern __shared__ Vec16<T> backward_smem[];
    T* const shared = backward_smem[0].v;
    unsigned smem_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(smem_bytes));
    const int tid = threadIdx.x, threads = blockDim.x;
    auto contribution = [&](long long b, long long i, long long j, int& k, T& g) {
        k = *element<const int>(p.argmax, b, i, j);
        if (k < 0 || k >= K) return false;
        g = *element<const T>(p.grad_c, b, i, j);
        if (p.multiply_by_other) g *= GRAD_A ? *element<const T>(p.other, b, k, j) : *element<const T>(p.other, b, i, k);
        return true;
    };
    auto store = [&](T* d, T v) {
        if (p.overwrite) *d = v;
        else if (v != T(0)) *d += v;
    };
    if (GRAD_A && smem_bytes >= K * sizeof(T)) {
        // Rows of argmax and grad_C that are contiguous and 16-byte aligned are read 4 elements
        // at a time (one 128-bit load of argmax, one or two of grad_C): with a load pair per
        // thread in flight the loop was latency-bound at 46% of HBM bandwidth (bench/NOTES.md).
        constexpr int V = 4;
        const auto aligned = [](const void* q) { return reinterpret_cast<unsigned long long>(q) % 16 == 0; };
        const bool vec = p.argmax.col_stride == 1 && p.grad_c.col_stride == 1 && p.argmax.row_stride % V == 0 &&
                         p.grad_c.row_stride % V == 0 &&
                         (p.batch == 1 || (p.argmax.batch_stride % V == 0 && p.grad_c.batch_stride % V == 0)) &&
                         aligned(p.argmax.ptr) && aligned(p.grad_c.ptr);
        for (long long r = blockIdx.x; r < p.batch * M; r += gridDim.x) {
            const long long b = r / M, i = r % M;
            for (long long k = tid; k < K; k += threads) shared[k] = T(0);
            __syncthreads();
            if (vec) {
                const int* const arg_row = element<const int>(p.argmax, b, i, 0);
                const T* const grad_row = element<const T>(p.grad_c, b, i, 0);
                for (long long j0 = tid * V; j0 < N; j0 += threads * V) {
                    int kv[V];
                    T gv[V];
                    if (j0 + V <= N) {
                        const int4 k4 = *reinterpret_cast<const int4*>(arg_row + j0);
                        kv[0] = k4.x, kv[1] = k4.y, kv[2] = k4.z, kv[3] = k4.w;
                        constexpr int PER = 16 / static_cast<int>(sizeof(T));   // elements per 128-bit load
#pragma unroll
                        for (int h = 0; h < V / PER; ++h) {
                            const Vec16<T> g = reinterpret_cast<const Vec16<T>*>(grad_row + j0)[h];
#pragma unroll
                            for (int e = 0; e < PER; ++e) gv[h * PER + e] = g.v[e];
                        }
                    } else {
#pragma unroll
                        for (int e = 0; e < V; ++e) {
                            kv[e] = j0 + e < N ? arg_row[j0 + e] : -1;
                            gv[e] = j0 + e < N ? grad_row[j0 + e] : T(0);
                        }
                    }
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        if (kv[e] < 0 || kv[e] >= K) continue;
                        T g = gv[e];
                        if (p.multiply_by_other) g *= *element<const T>(p.other, b, kv[e], j0 + e);
                        atomicAdd(&shared[kv[e]], g);
                    }
                }
            } else {
                for (long long j = tid; j < N; j += threads) {
                    int k;
                    T g;
                    if (contribution(b, i, j, k, g)) atomicAdd(&shared[k], g);
                }
            }
            __syncthreads();
            for (long long k = tid; k < K; k += threads) store(element<T>(p.grad, b, i, k), shared[k]);
            __syncthreads();
        }
        return;
    }
    constexpr int SLAB = BACKWARD_B_SLAB_BYTES / sizeof(T);   // columns per block
    if (!GRAD_A && smem_bytes >= K * SLAB * sizeof(T)) {
        const long long slabs = (N + SLAB - 1) / SLAB;
        for (long long r = blockIdx.x; r < p.batch * slabs; r += gridDim.x) {
            const long long b = r / slabs, j0 = (r % slabs) * SLAB;
            for (long long e = tid; e < K * SLAB; e += threads) shared[e] = T(0);
            __syncthreads();
            // A thread keeps one column of the slab (threads is a multiple of SLAB) and walks its
            // rows threads / SLAB apart by pointer steps: the index arithmetic per element (64-bit
            // divisions and three strided products) had cost ~115 instructions per element, which
            // made the loop instruction-bound (ncu: 63% issue active, 34% of HBM).
            // Eight elements' loads in flight per thread before their additions (one block per
            // multiprocessor holds its K x SLAB shared values, so its loads must cover latency);
            // grad_C is read with argmax, not after it. (f64: four, within the 64 registers that
            // 1024 threads leave each.)
            constexpr int UNROLL = sizeof(T) == 4 ? 8 : 4;
            const int column = tid % SLAB, rows_apart = threads / SLAB;
            const long long j = j0 + column;
            if (j < N) {
                const int* arg = element<const int>(p.argmax, b, tid / SLAB, j);
                const T* grad_c = element<const T>(p.grad_c, b, tid / SLAB, j);
                const long long arg_step = rows_apart * p.argmax.row_stride, grad_step = rows_apart * p.grad_c.row_stride;
                for (long long i0 = tid / SLAB; i0 < M; i0 += UNROLL * rows_apart) {
                    int k[UNROLL];
                    T g[UNROLL];
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u) {
                        const bool inside = i0 + u * rows_apart < M;
                        k[u] = inside ? arg[u * arg_step] : -1;
                        g[u] = inside ? grad_c[u * grad_step] : T(0);
                    }
                    if (p.multiply_by_other) {
#pragma unroll
                        for (int u = 0; u < UNROLL; ++u)
                            if (k[u] >= 0 && k[u] < K) g[u] *= *element<const T>(p.other, b, i0 + u * rows_apart, k[u]);
                    }
#pragma unroll
                    for (int u = 0; u < UNROLL; ++u)
                        if (k[u] >= 0 && k[u] < K) atomicAdd(&shared[k[u] * SLAB + column], g[u]);
                    arg += UNROLL * arg_step;
                    grad_c += UNROLL * grad_step;
                }
            }
            __syncthreads();
            if (j < N) {
                T* out = element<T>(p.grad, b, tid / SLAB, j);
                const long long out_step = rows_apart * p.grad.row_stride;
                for (long long k = tid / SLAB; k < K; k += rows_apart, out += out_step) store(out, shared[k * SLAB + column]);
            }
            __syncthreads();
        }
        return;
    }
    const long long total = p.batch * M * N;
    const long long stride = static_cast<long long>(gridDim.x) * threads;
    for (long long e = static_cast<long long>(blockIdx.x) * threads + tid; e < total; e += stride) {
        const long long j = e % N, row = e / N;
        const long long i = row % M, b = row / M;
        int k;
        T g;
        if (contribution(b, i, j, k, g)) atomicAdd(GRAD_A ? element<T>(p.grad, b, i, k) : element<T>(p.grad, b, k, j), g);
    }
}

}  // namespace tg

// ---------------------------------------------------------------------------------------------
// Fragments. Each marker's threads/tile_m/tile_n must match the Tile it instantiates.

//@kernel name=tropical_gemm_f32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MaxPlus, float, false>(p);
}

//@kernel name=tropical_gemm_f32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MinPlus, float, false>(p);
}

//@kernel name=tropical_gemm_f32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MaxMul, float, false>(p);
}

//@kernel name=tropical_gemm_f64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF64, tg::MaxPlus, double, false>(p);
}

//@kernel name=tropical_gemm_f64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f64_minplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF64, tg::MinPlus, double, false>(p);
}

//@kernel name=tropical_gemm_f64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_f64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::GemmF64, tg::MaxMul, double, false>(p);
}

//@kernel name=tropical_gemm_i32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxPlus, int, false>(p);
}

//@kernel name=tropical_gemm_i32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MinPlus, int, false>(p);
}

//@kernel name=tropical_gemm_i32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_gemm_i32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxMul, int, false>(p);
}

//@kernel name=tropical_gemm_i64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxPlus, long long, false>(p);
}

//@kernel name=tropical_gemm_i64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MinPlus, long long, false>(p);
}

//@kernel name=tropical_gemm_i64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxMul, long long, false>(p);
}

//@kernel name=tropical_gemm_argmax_f32_maxplus threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxPlus, float, true>(p);
}

//@kernel name=tropical_gemm_argmax_f32_minplus threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MinPlus, float, true>(p);
}

//@kernel name=tropical_gemm_argmax_f32_maxmul threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_f32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxMul, float, true>(p);
}

//@kernel name=tropical_gemm_argmax_f64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxPlus, double, true>(p);
}

//@kernel name=tropical_gemm_argmax_f64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MinPlus, double, true>(p);
}

//@kernel name=tropical_gemm_argmax_f64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxMul, double, true>(p);
}

//@kernel name=tropical_gemm_argmax_i32_maxplus threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxPlus, int, true>(p);
}

//@kernel name=tropical_gemm_argmax_i32_minplus threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MinPlus, int, true>(p);
}

//@kernel name=tropical_gemm_argmax_i32_maxmul threads=128 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(128, 3) tropical_gemm_argmax_i32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxMul, int, true>(p);
}

//@kernel name=tropical_gemm_argmax_i64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxPlus, long long, true>(p);
}

//@kernel name=tropical_gemm_argmax_i64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MinPlus, long long, true>(p);
}

//@kernel name=tropical_gemm_argmax_i64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxMul, long long, true>(p);
}

//@kernel name=tropical_batched_f32_maxplus threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MaxPlus, float, false>(p);
}

//@kernel name=tropical_batched_f32_minplus threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MinPlus, float, false>(p);
}

//@kernel name=tropical_batched_f32_maxmul threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_f32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MaxMul, float, false>(p);
}

//@kernel name=tropical_batched_f64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_f64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MaxPlus, double, false>(p);
}

//@kernel name=tropical_batched_f64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_f64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MinPlus, double, false>(p);
}

//@kernel name=tropical_batched_f64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_f64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MaxMul, double, false>(p);
}

//@kernel name=tropical_batched_i32_maxplus threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MaxPlus, int, false>(p);
}

//@kernel name=tropical_batched_i32_minplus threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MinPlus, int, false>(p);
}

//@kernel name=tropical_batched_i32_maxmul threads=64 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(64) tropical_batched_i32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Batched32, tg::MaxMul, int, false>(p);
}

//@kernel name=tropical_batched_i64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_i64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MaxPlus, long long, false>(p);
}

//@kernel name=tropical_batched_i64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_i64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MinPlus, long long, false>(p);
}

//@kernel name=tropical_batched_i64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_batched_i64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Batched64, tg::MaxMul, long long, false>(p);
}

//@kernel name=tropical_backward_a_f32 threads=256 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(256) tropical_backward_a_f32(const TgBackwardParams p) {
    tg::backward<float, true>(p);
}

//@kernel name=tropical_backward_a_f64 threads=256 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(256) tropical_backward_a_f64(const TgBackwardParams p) {
    tg::backward<double, true>(p);
}

//@kernel name=tropical_backward_b_f32 threads=1024 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(1024) tropical_backward_b_f32(const TgBackwardParams p) {
    tg::backward<float, false>(p);
}

//@kernel name=tropical_backward_b_f64 threads=1024 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(1024) tropical_backward_b_f64(const TgBackwardParams p) {
    tg::backward<double, false>(p);
}

//@kernel name=tropical_small_f32_maxplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f32_maxplus(const TgGemmParams p) {
    tg::gemm_small<tg::MaxPlus, float>(p);
}

//@kernel name=tropical_small_f32_minplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f32_minplus(const TgGemmParams p) {
    tg::gemm_small<tg::MinPlus, float>(p);
}

//@kernel name=tropical_small_f32_maxmul threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f32_maxmul(const TgGemmParams p) {
    tg::gemm_small<tg::MaxMul, float>(p);
}

//@kernel name=tropical_small_f64_maxplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f64_maxplus(const TgGemmParams p) {
    tg::gemm_small<tg::MaxPlus, double>(p);
}

//@kernel name=tropical_small_f64_minplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f64_minplus(const TgGemmParams p) {
    tg::gemm_small<tg::MinPlus, double>(p);
}

//@kernel name=tropical_small_f64_maxmul threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_f64_maxmul(const TgGemmParams p) {
    tg::gemm_small<tg::MaxMul, double>(p);
}

//@kernel name=tropical_small_i32_maxplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i32_maxplus(const TgGemmParams p) {
    tg::gemm_small<tg::MaxPlus, int>(p);
}

//@kernel name=tropical_small_i32_minplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i32_minplus(const TgGemmParams p) {
    tg::gemm_small<tg::MinPlus, int>(p);
}

//@kernel name=tropical_small_i32_maxmul threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i32_maxmul(const TgGemmParams p) {
    tg::gemm_small<tg::MaxMul, int>(p);
}

//@kernel name=tropical_small_i64_maxplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i64_maxplus(const TgGemmParams p) {
    tg::gemm_small<tg::MaxPlus, long long>(p);
}

//@kernel name=tropical_small_i64_minplus threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i64_minplus(const TgGemmParams p) {
    tg::gemm_small<tg::MinPlus, long long>(p);
}

//@kernel name=tropical_small_i64_maxmul threads=256 tile_m=32 tile_n=32
extern "C" __global__ void __launch_bounds__(256) tropical_small_i64_maxmul(const TgGemmParams p) {
    tg::gemm_small<tg::MaxMul, long long>(p);
}

// Split-K products (k_splits > 1; see TgGemmParams): the gemm kernels' tiles over a chunk of K each,
// for a long K over too few tiles to fill the GPU (gemm.cpp chooses them by name).

//@kernel name=tropical_splitk_f32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MaxPlus, float, false, true>(p);
}

//@kernel name=tropical_splitk_f32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MinPlus, float, false, true>(p);
}

//@kernel name=tropical_splitk_f32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_f32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::GemmF32, tg::MaxMul, float, false, true>(p);
}

//@kernel name=tropical_splitk_i32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxPlus, int, false, true>(p);
}

//@kernel name=tropical_splitk_i32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MinPlus, int, false, true>(p);
}

//@kernel name=tropical_splitk_i32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256, 2) tropical_splitk_i32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxMul, int, false, true>(p);
}
