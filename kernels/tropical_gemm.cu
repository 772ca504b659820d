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
struct TgGemmParams {
    TgOperand a, b, c, argmax;
    long long m, n, k, batch;
    int accumulate;
    int reserved;
};

// For every (b,i,j) whose argmax k is in [0, K):
//   grad_a: grad[i,k] += grad_c[i,j] * (multiply_by_other ? other[k,j] : 1)   (other = B)
//   grad_b: grad[k,j] += grad_c[i,j] * (multiply_by_other ? other[i,k] : 1)   (other = A)
struct TgBackwardParams {
    TgOperand grad_c, argmax, other, grad;
    long long m, n, k, batch;
    int multiply_by_other;
    int reserved;
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
// Padding outside the matrices is stage(zero()): pad (x) pad never beats any accumulator.

struct MaxPlus {};
struct MinPlus {};
struct MaxMul {};

template <class S, class T, bool Int = IsInt<T>::value>
struct Ring;

template <class T>
struct Ring<MaxPlus, T, false> {
    static __device__ __forceinline__ T zero() { return -infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return max_nan(acc, a + b); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return max_nan(x, y); }
};

template <class T>
struct Ring<MinPlus, T, false> {
    static __device__ __forceinline__ T zero() { return infinity(T()); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return min_nan(acc, a + b); }
    static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s < acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return min_nan(x, y); }
};

// Starting at the zero 0 makes negative inputs (outside the domain) give max(0, max_k a*b).
template <class T>
struct Ring<MaxMul, T, false> {
    static __device__ __forceinline__ T zero() { return T(0); }
    static __device__ __forceinline__ T stage(T x) { return x + T(0); }
    static __device__ __forceinline__ T init() { return zero(); }
    static __device__ __forceinline__ T mac(T a, T b, T acc) { return max_nan(acc, a * b); }
    static __device__ __forceinline__ T times(T a, T b) { return a * b; }
    static __device__ __forceinline__ bool beats(T s, T acc) { return s > acc || (s != s && acc == acc); }
    static __device__ __forceinline__ T finish(T acc) { return acc; }
    static __device__ __forceinline__ T plus(T x, T y) { return max_nan(x, y); }
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
};

// ---------------------------------------------------------------------------------------------
// The tiled main loop, shared by every forward kernel.
//
// A block computes a BM x BN tile of C with K-slices of BK staged in shared memory (two buffers, so
// one barrier per slice); each thread owns TM x TN results. A thread's rows (and columns) come in
// groups of VEC adjacent elements, groups BM / (TM / VEC) apart, so that its fragment is read with
// 128-bit shared loads and a warp's loads fall in distinct banks.

template <int BM_, int BN_, int BK_, int TM_, int TN_>
struct Tile {
    static constexpr int bm = BM_, bn = BN_, bk = BK_, tm = TM_, tn = TN_;
    static constexpr int threads = (BM_ / TM_) * (BN_ / TN_);
};

// Gemm tiles: 8x8 results per thread for 32-bit types (a 4x4 tile saturates shared memory before
// the ALUs); 4x4 for 64-bit types, whose 64 accumulators would need 128 registers at 8x8.
using Gemm32 = Tile<128, 128, 8, 8, 8>;     // 256 threads
using Gemm64 = Tile<64, 64, 8, 4, 4>;       // 256 threads
// Argmax costs 4 instructions per term, 3 of them on the half-rate pipe (FMNMX, ISETP, SEL), which
// bounds it near 9.5 Tops on an H200 whatever the tile (128x128/8x8 spills and is no faster), so
// the lighter 4x4 tile suffices. Going past that needs fewer per-term instructions, not a tile.
using Argmax32 = Tile<64, 64, 8, 4, 4>;     // 256 threads
// Batched tiles, for many products of 64..256: one 64x64 tile keeps blocks small and plentiful.
using Batched32 = Tile<64, 64, 8, 8, 8>;    // 64 threads
using Batched64 = Tile<64, 64, 8, 4, 4>;    // 256 threads

template <class T>
struct alignas(16) Vec16 {
    T v[16 / sizeof(T)];
};

// One operand's global -> shared staging. Each thread loads LOADS elements per K-slice at
// (outer0 + r*d_outer, k0 + r*d_k) for r < LOADS, outer being rows of A or columns of B. When the
// operand is contiguous along k the warp walks k first, otherwise along the outer dimension, so
// either layout reads whole sectors. Shared rows are padded by VEC elements so that the transposed
// walk spreads over the banks and rows stay 16-byte aligned.
template <class T, int OUTER, int BK, int THREADS>
struct Stager {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int LD = OUTER + VEC;
    static constexpr int LOADS = OUTER * BK / THREADS;
    static_assert(OUTER * BK % THREADS == 0 && THREADS % BK == 0 && THREADS % OUTER == 0, "staging map");

    const T* ptr;            // this thread's first element in the current K-slice
    long long step;          // between a thread's successive elements
    long long slice_step;    // from one K-slice to the next
    long long outer_left;    // elements r with r*d_outer < outer_left lie inside the matrix
    long long k_left;        // likewise along k, for the current slice
    int d_outer, d_k;
    int smem;                // shared offset of the first element
    int smem_step;

    // outer_stride/k_stride: element strides of this operand along its outer dimension and along k.
    __device__ __forceinline__ Stager(const T* base, long long outer_stride, long long k_stride,
                                      long long outer_begin, long long outer_size, long long k_size) {
        const int tid = threadIdx.x;
        const bool k_fast = k_stride == 1;
        const int outer0 = k_fast ? tid / BK : tid % OUTER;
        const int kk0 = k_fast ? tid % BK : tid / OUTER;
        d_outer = k_fast ? THREADS / BK : 0;
        d_k = k_fast ? 0 : THREADS / OUTER;
        ptr = base + (outer_begin + outer0) * outer_stride + kk0 * k_stride;
        step = d_outer * outer_stride + d_k * k_stride;
        slice_step = BK * k_stride;
        outer_left = outer_size - outer_begin - outer0;
        k_left = k_size - kk0;
        smem = kk0 * LD + outer0;
        smem_step = d_k * LD + d_outer;
    }

    // Raw values: staging waits for stash(), so that nothing waits on the loads before the compute.
    template <class R>
    __device__ __forceinline__ void fetch(T (&regs)[LOADS]) const {
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            regs[r] = R::zero();
            if (r * d_outer < outer_left && r * d_k < k_left) regs[r] = ptr[r * step];
        }
    }

    __device__ __forceinline__ void next_slice() {
        ptr += slice_step;
        k_left -= BK;
    }

    template <class R>
    __device__ __forceinline__ void stash(T* tile, const T (&regs)[LOADS]) const {
#pragma unroll
        for (int r = 0; r < LOADS; ++r) tile[smem + r * smem_step] = R::stage(regs[r]);
    }
};

template <class Cfg, class S, class T, bool ARGMAX>
__device__ __forceinline__ void gemm(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, TM = Cfg::tm, TN = Cfg::tn;
    constexpr int THREADS = Cfg::threads;
    constexpr int VEC = 16 / sizeof(T);
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    using StageA = Stager<T, BM, BK, THREADS>;
    using StageB = Stager<T, BN, BK, THREADS>;
    constexpr int LDA = StageA::LD, LDB = StageB::LD;
    // A thread's fragment: groups of VEC adjacent rows (columns), GROUP_M (GROUP_N) apart.
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);

    __shared__ Vec16<T> smem_a[2 * BK * LDA / VEC];
    __shared__ Vec16<T> smem_b[2 * BK * LDB / VEC];
    T* const tile_a = smem_a[0].v;
    T* const tile_b = smem_b[0].v;

    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const long long M = p.m, N = p.n, K = p.k;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (K + BK - 1) / BK;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        const T* const a_batch = element<T>(p.a, b, 0, 0);
        const T* const b_batch = element<T>(p.b, b, 0, 0);
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0, M, K);
                StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0, N, K);

                T acc[TM][TN];
                int arg[TM][TN];   // dead, and removed, unless ARGMAX
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        acc[i][j] = R::init();
                        arg[i][j] = -1;
                    }

                T ra[StageA::LOADS], rb[StageB::LOADS];
                if (slices > 0) {
                    sa.template fetch<R>(ra);
                    sb.template fetch<R>(rb);
                    sa.template stash<R>(tile_a, ra);
                    sb.template stash<R>(tile_b, rb);
                    __syncthreads();
                }
                // Slice s is read from buffer s&1 while slice s+1 travels through registers into the
                // other buffer, which everyone finished reading before the previous barrier.
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    const bool more = s + 1 < slices;
                    if (more) {
                        sa.next_slice();
                        sb.next_slice();
                        sa.template fetch<R>(ra);
                        sb.template fetch<R>(rb);
                    }
                    const T* const sa_buf = tile_a + buf * BK * LDA;
                    const T* const sb_buf = tile_b + buf * BK * LDB;
                    const int k0 = static_cast<int>(s * BK);   // argmax is int32: K < 2^31 there
#pragma unroll
                    for (int kk = 0; kk < BK; ++kk) {
                        T fa[TM], fb[TN];
#pragma unroll
                        for (int g = 0; g < TM / VEC; ++g) {
                            const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(sa_buf + kk * LDA + g * GROUP_M + ty * VEC);
#pragma unroll
                            for (int e = 0; e < VEC; ++e) fa[g * VEC + e] = v.v[e];
                        }
#pragma unroll
                        for (int g = 0; g < TN / VEC; ++g) {
                            const Vec16<T> v = *reinterpret_cast<const Vec16<T>*>(sb_buf + kk * LDB + g * GROUP_N + tx * VEC);
#pragma unroll
                            for (int e = 0; e < VEC; ++e) fb[g * VEC + e] = v.v[e];
                        }
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TN; ++j) {
                                if constexpr (ARGMAX && sizeof(T) == 4) {
                                    // One mac and one compare: for 32-bit types the accumulator's
                                    // bits change exactly when the term beats it (strictly better,
                                    // or the first NaN). Staging leaves no -0 term but MaxMul's
                                    // out-of-domain 0 * -x, and FMNMX keeps the +0 accumulator then.
                                    const T n = R::mac(fa[i], fb[j], acc[i][j]);
                                    if (bits(n) != bits(acc[i][j])) arg[i][j] = k0 + kk;
                                    acc[i][j] = n;
                                } else if constexpr (ARGMAX) {
                                    const T t = R::times(fa[i], fb[j]);
                                    if (R::beats(t, acc[i][j])) {
                                        acc[i][j] = t;
                                        arg[i][j] = k0 + kk;
                                    }
                                } else {
                                    acc[i][j] = R::mac(fa[i], fb[j], acc[i][j]);
                                }
                            }
                    }
                    if (more) {
                        sa.template stash<R>(tile_a + (buf ^ 1) * BK * LDA, ra);
                        sb.template stash<R>(tile_b + (buf ^ 1) * BK * LDB, rb);
                    }
                    __syncthreads();
                }

                // Epilogue: each result goes straight to C (and argmax), bounds-checked.
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                    if (row >= M) continue;
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                        if (col >= N) continue;
                        T* const c = element<T>(p.c, b, row, col);
                        T v = R::finish(acc[i][j]);
                        if constexpr (ARGMAX) {
                            *element<int>(p.argmax, b, row, col) = arg[i][j];
                        } else if (p.accumulate) {
                            v = R::plus(*c, v);
                        }
                        *c = v;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Backward: route grad_C through the argmax. Atomics, since many (i,j) may share one target.
template <class T, bool GRAD_A>
__device__ __forceinline__ void backward(const TgBackwardParams& p) {
    const long long M = p.m, N = p.n, K = p.k;
    const long long total = p.batch * M * N;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
        const long long j = e % N, row = e / N;
        const long long i = row % M, b = row / M;
        const int k = *element<const int>(p.argmax, b, i, j);
        if (k < 0 || k >= K) continue;
        T g = *element<const T>(p.grad_c, b, i, j);
        if (p.multiply_by_other) g *= GRAD_A ? *element<const T>(p.other, b, k, j) : *element<const T>(p.other, b, i, k);
        atomicAdd(GRAD_A ? element<T>(p.grad, b, i, k) : element<T>(p.grad, b, k, j), g);
    }
}

}  // namespace tg

// ---------------------------------------------------------------------------------------------
// Fragments. Each marker's threads/tile_m/tile_n must match the Tile it instantiates.

//@kernel name=tropical_gemm_f32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxPlus, float, false>(p);
}

//@kernel name=tropical_gemm_f32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MinPlus, float, false>(p);
}

//@kernel name=tropical_gemm_f32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f32_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxMul, float, false>(p);
}

//@kernel name=tropical_gemm_f64_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f64_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxPlus, double, false>(p);
}

//@kernel name=tropical_gemm_f64_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f64_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MinPlus, double, false>(p);
}

//@kernel name=tropical_gemm_f64_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_f64_maxmul(const TgGemmParams p) {
    tg::gemm<tg::Gemm64, tg::MaxMul, double, false>(p);
}

//@kernel name=tropical_gemm_i32_maxplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MaxPlus, int, false>(p);
}

//@kernel name=tropical_gemm_i32_minplus threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Gemm32, tg::MinPlus, int, false>(p);
}

//@kernel name=tropical_gemm_i32_maxmul threads=256 tile_m=128 tile_n=128
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_i32_maxmul(const TgGemmParams p) {
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

//@kernel name=tropical_gemm_argmax_f32_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxPlus, float, true>(p);
}

//@kernel name=tropical_gemm_argmax_f32_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MinPlus, float, true>(p);
}

//@kernel name=tropical_gemm_argmax_f32_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_f32_maxmul(const TgGemmParams p) {
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

//@kernel name=tropical_gemm_argmax_i32_maxplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i32_maxplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MaxPlus, int, true>(p);
}

//@kernel name=tropical_gemm_argmax_i32_minplus threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i32_minplus(const TgGemmParams p) {
    tg::gemm<tg::Argmax32, tg::MinPlus, int, true>(p);
}

//@kernel name=tropical_gemm_argmax_i32_maxmul threads=256 tile_m=64 tile_n=64
extern "C" __global__ void __launch_bounds__(256) tropical_gemm_argmax_i32_maxmul(const TgGemmParams p) {
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

//@kernel name=tropical_backward_b_f32 threads=256 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(256) tropical_backward_b_f32(const TgBackwardParams p) {
    tg::backward<float, false>(p);
}

//@kernel name=tropical_backward_b_f64 threads=256 tile_m=0 tile_n=0
extern "C" __global__ void __launch_bounds__(256) tropical_backward_b_f64(const TgBackwardParams p) {
    tg::backward<double, false>(p);
}
