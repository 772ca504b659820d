// tropical-gemm's device code, the OrAnd piece (after orand_staging.cuh, before entry.cuh): the Boolean
// product C[i,j] = OR_k (A[i,k] AND B[k,j]) with K packed into 32-bit words, and the kernel that
// packs booleans in bytes into those words.
//
// Semantics (src/reference/reference.hpp states them in full): a byte is true where it is nonzero;
// C is written 0 or 1 (with accumulate, C = (C_old != 0) OR the product); K = 0 gives 0; argmax is
// the smallest k whose term A[i,k] AND B[k,j] is true, -1 where none is.
//
// Words: bit k % 32 of word k / 32 holds element k along K, so one AND of two words is 32 terms and
// acc |= a & b (one LOP3) adds them to a result. The main loop is the Tiled kernels' (staging.cuh,
// main_loop.cuh) on words: a BM x BN tile of results per block, TM x TN 32-bit accumulators per
// thread in groups of 4 adjacent rows (columns), read from shared memory with 128-bit loads, and
// operand slices of BK words double-buffered in shared memory as [word][row of A] and
// [word][column of B], fetched in stages of SK words through registers while the previous stage
// is computed. What differs is where the words come from:
//  - Packed kernels: the caller's words (pack_bits' output, or its own), staged by the Stager of
//    staging.cuh. Bits past K in the last word may hold anything: A's are cleared as it is staged
//    (a clear bit in A clears the term whatever B holds), so no caller has to.
//  - Tiled kernels (byte operands): each thread loads 32 bytes that are consecutive in memory and
//    turns them into one word as it stores them to shared memory (bits_of, orand_staging.cuh). Where those bytes run
//    along K (a row-major A, a column-major B) that word is the operand's; where they run along rows
//    of A or columns of B, 32 lanes hold 32 k's of the same 32 rows and a 32 x 32 bit transpose
//    across the warp (transpose32) gives each lane the word of one row. So every layout is packed
//    on the fly, bytes outside the matrices read as false, and the call allocates nothing; each
//    block packs its own rows and columns again, which costs about as many instructions as the
//    LOP3s it feeds (bench/NOTES.md): pack once (PackBits) to reuse operands or for large products.
// Argmax: a slice's terms go to their own accumulators; at the slice's end, results whose slice
// accumulator is nonzero for the first time look in the slice's words, still in shared memory, for
// the first word with a nonzero AND and take its lowest set bit (each result does this once), and
// store their k at once. A block whose results all have their k stops: the rest of K cannot change
// a true result or its smallest k.

namespace tg {

// The semiring (the catalogue's word for it; its algebra is this file's).
struct OrAnd {};

// ---------------------------------------------------------------------------------------------
// The product.

template <bool FIRST, class A, class B>
struct Pick {
    using type = A;
};
template <class A, class B>
struct Pick<false, A, B> {
    using type = B;
};

template <class S, bool PACKED>
__device__ __forceinline__ S make_stager(const unsigned* base, long long os, long long ks, long long outer_begin) {
    if constexpr (PACKED) return S(base, os, ks, outer_begin);
    else return S();
}

// The first k of a result's slice (slice s, BK words from word s * BK, in buffer `a` / `b` at its row
// and column) whose term is true, or -1.
template <int BK, int LDA, int LDB>
__device__ __forceinline__ int first_true(const unsigned* a, const unsigned* b, long long s) {
#pragma unroll 1
    for (int w = 0; w < BK; ++w) {
        const unsigned t = a[w * LDA] & b[w * LDB];
        if (t != 0u) return static_cast<int>((s * BK + w) * 32 + (__ffs(static_cast<int>(t)) - 1));
    }
    return -1;
}

template <class Cfg, bool PACKED, bool ARGMAX>
__device__ __forceinline__ void orand_gemm(const TgGemmParams& p) {
    constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, SK = Cfg::sk, TM = Cfg::tm, TN = Cfg::tn;
    constexpr int THREADS = Cfg::threads, STAGES = BK / SK, VEC = 4;
    static_assert(BK % SK == 0, "a slice is fetched in whole stages");
    static_assert(TM % VEC == 0 && TN % VEC == 0, "fragments are read in 128-bit pieces");
    static_assert(TM * TN <= 64, "argmax keeps one bit per result in 64");
    // The stagers of this kernel's operands (only the chosen kind is instantiated).
    using StageA = typename Pick<PACKED, WordStager<BM, SK, THREADS>, ByteStager<BM, SK, THREADS>>::type;
    using StageB = typename Pick<PACKED, WordStager<BN, SK, THREADS>, ByteStager<BN, SK, THREADS>>::type;
    constexpr int LDA = BM + VEC, LDB = BN + VEC;  // rows padded by one 128-bit vector, as the Stager's
    constexpr int GROUP_M = BM / (TM / VEC), GROUP_N = BN / (TN / VEC);

    __shared__ Vec16<unsigned> smem_a[2 * BK * LDA / VEC];
    __shared__ Vec16<unsigned> smem_b[2 * BK * LDB / VEC];
    unsigned* const tile_a = smem_a[0].v;
    unsigned* const tile_b = smem_b[0].v;

    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const long long M = p.m, N = p.n, K = p.k;
    const long long words = (K + 31) / 32;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long long slices = (words + BK - 1) / BK;
    // Packed: the last word's bits past K are cleared in A as it is staged, so stages that hold that
    // word take the checked fetch (clean_stages counts the stages of whole words before it).
    const unsigned tail = K % 32 == 0 ? 0xffffffffu : (1u << (K % 32)) - 1u;
    const long long clean_stages = (K / 32) / SK;

    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        // A is seen as (row, k), B as (column, k): each operand's outer and K strides.
        const long long a_os = p.a.row_stride, a_ks = p.a.col_stride, b_os = p.b.col_stride, b_ks = p.b.row_stride;
        const bool a_along = a_ks == 1 || a_os != 1, b_along = b_ks == 1 || b_os != 1;
        const unsigned* const a_words = element<const unsigned>(p.a, b, 0, 0);
        const unsigned* const b_words = element<const unsigned>(p.b, b, 0, 0);
        const unsigned char* const a_bytes = element<const unsigned char>(p.a, b, 0, 0);
        const unsigned char* const b_bytes = element<const unsigned char>(p.b, b, 0, 0);
        const bool a_vec = StageA::vec_ok(a_words, a_os, a_ks), b_vec = StageB::vec_ok(b_words, b_os, b_ks);
        const int a_align = run_alignment(a_bytes, a_along ? a_os : a_ks, a_along ? a_ks : a_os);
        const int b_align = run_alignment(b_bytes, b_along ? b_os : b_ks, b_along ? b_ks : b_os);
        unsigned char* const c_batch = element<unsigned char>(p.c, b, 0, 0);
        const bool c_vec = !ARGMAX && p.c.col_stride == 1 && p.c.row_stride % 4 == 0 &&
                           reinterpret_cast<unsigned long long>(c_batch) % 4 == 0;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                StageA sa = make_stager<StageA, PACKED>(a_words, a_os, a_ks, m0);
                StageB sb = make_stager<StageB, PACKED>(b_words, b_os, b_ks, n0);
                const bool fast_tile = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;

                // Stage q holds words [q * SK, (q + 1) * SK); slice s is stages s * STAGES .. + STAGES - 1.
                auto fetch = [&](long long q) {
                    if constexpr (PACKED) {
                        const bool fast = fast_tile && q < clean_stages;
                        sa.fetch(fast, a_os, a_ks, a_along, M - m0, words - q * SK, q, words - 1, tail);
                        // B keeps its tail: A's cleared bits clear those terms.
                        sb.fetch(fast, b_os, b_ks, b_along, N - n0, words - q * SK, q, words - 1, 0xffffffffu);
                    } else {
                        sa.fetch(a_bytes, a_os, a_ks, a_along, a_align, m0, M - m0, K, q);
                        sb.fetch(b_bytes, b_os, b_ks, b_along, b_align, n0, N - n0, K, q);
                    }
                };
                auto stash = [&](int buf, int h) {
                    unsigned* const ta = tile_a + (buf * BK + h * SK) * LDA;
                    unsigned* const tb = tile_b + (buf * BK + h * SK) * LDB;
                    if constexpr (PACKED) {
                        sa.stash(ta, a_along, a_ks);
                        sb.stash(tb, b_along, b_ks);
                    } else {
                        sa.template stash<LDA>(ta, a_along);
                        sb.template stash<LDB>(tb, b_along);
                    }
                };

                unsigned acc[TM][TN];  // the result's OR so far, or with ARGMAX the slice's
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = 0u;
                // ARGMAX: which results have their k (bit i * TN + j), and which lie outside C.
                unsigned long long found = 0, outside = 0;
                if constexpr (ARGMAX) {
#pragma unroll
                    for (int i = 0; i < TM; ++i)
#pragma unroll
                        for (int j = 0; j < TN; ++j) {
                            const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                            const long long col = n0 + (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                            if (row >= M || col >= N) outside |= 1ull << (i * TN + j);
                        }
                }

#pragma unroll
                for (int h = 0; h < STAGES; ++h) {
                    fetch(h);
                    stash(0, h);
                }
                __syncthreads();
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(s & 1);
                    const unsigned* const a_buf = tile_a + buf * BK * LDA + ty * VEC;
                    const unsigned* const b_buf = tile_b + buf * BK * LDB + tx * VEC;
                    // Stage h of the slice: the next slice's stage travels while this one is computed.
                    // first: the slice's first stage, whose first word starts ARGMAX's accumulators
                    // (a constant at each call, once the lambda is inlined; NVRTC takes no generic
                    // lambda in device code).
                    auto stage = [&](int h, bool first) {
                        fetch((s + 1) * STAGES + h);
                        // Stages past the last word hold zeros: skipped (the same for the whole block).
                        if (first || s * BK + h * SK < words) {
#pragma unroll
                            for (int kk = 0; kk < SK; ++kk) {
                                unsigned fa[TM], fb[TN];
                                load_fragment<unsigned, TM, GROUP_M>(fa, a_buf + (h * SK + kk) * LDA);
                                load_fragment<unsigned, TN, GROUP_N>(fb, b_buf + (h * SK + kk) * LDB);
#pragma unroll
                                for (int i = 0; i < TM; ++i)
#pragma unroll
                                    for (int j = 0; j < TN; ++j) {
                                        if (ARGMAX && first && kk == 0) acc[i][j] = fa[i] & fb[j];
                                        else acc[i][j] |= fa[i] & fb[j];
                                    }
                            }
                        }
                        stash(buf ^ 1, h);
                    };
                    stage(0, true);
                    // The Packed kernels' two stages unrolled; the Tiled kernels' eight (their bytes'
                    // conversion is long) in a loop, which keeps their code, and NVRTC's time, small.
                    if constexpr (STAGES <= 2) {
#pragma unroll
                        for (int h = 1; h < STAGES; ++h) stage(h, false);
                    } else {
#pragma unroll 1
                        for (int h = 1; h < STAGES; ++h) stage(h, false);
                    }
                    if constexpr (ARGMAX) {
                        // Results true in this slice for the first time: their first true term is in
                        // it, found in the slice's words, still in buffer `buf` (the next barrier
                        // comes before anyone writes it).
                        // (In two 32-bit halves: a compare and a predicated OR per result.)
                        unsigned fresh_lo = 0, fresh_hi = 0;
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TN; ++j) {
                                const int bit = i * TN + j;
                                if (acc[i][j] != 0u) {
                                    if (bit < 32) fresh_lo |= 1u << (bit % 32);
                                    else fresh_hi |= 1u << (bit % 32);
                                }
                            }
                        unsigned long long fresh =
                            (static_cast<unsigned long long>(fresh_hi) << 32 | fresh_lo) & ~found;
                        found |= fresh;
                        while (fresh != 0) {
                            const int bit = __ffsll(static_cast<long long>(fresh)) - 1;
                            fresh &= fresh - 1;
                            const int i = bit / TN, j = bit % TN;
                            const int r = (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                            const int c = (j / VEC) * GROUP_N + tx * VEC + j % VEC;
                            const int k =
                                first_true<BK, LDA, LDB>(tile_a + buf * BK * LDA + r, tile_b + buf * BK * LDB + c, s);
                            *element<int>(p.argmax, b, m0 + r, n0 + c) = k;
                        }
                        // Every result of the block has its k: the rest of K changes nothing.
                        if (__syncthreads_and((found | outside) == ~0ull >> (64 - TM * TN))) break;
                    } else {
                        __syncthreads();
                    }
                }

                // Epilogue: C = 0 or 1 (OR C_old with accumulate); four bytes of a row-major C as
                // one 32-bit store where they are aligned. ARGMAX: -1 for the results never true.
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const long long row = m0 + (i / VEC) * GROUP_M + ty * VEC + i % VEC;
                    if (row >= M) continue;
#pragma unroll
                    for (int g = 0; g < TN / VEC; ++g) {
                        const long long col0 = n0 + g * GROUP_N + tx * VEC;
                        unsigned v[VEC];
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            const int j = g * VEC + e;
                            v[e] = ARGMAX ? static_cast<unsigned>((found >> (i * TN + j)) & 1ull)
                                          : static_cast<unsigned>(acc[i][j] != 0u);
                        }
                        if (c_vec && col0 + VEC <= N) {
                            unsigned* const c = reinterpret_cast<unsigned*>(c_batch + row * p.c.row_stride + col0);
                            unsigned w = v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24;
                            if (p.accumulate) w |= nonzero_bytes(*c) >> 7;
                            *c = w;
                            continue;
                        }
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            const long long col = col0 + e;
                            if (col >= N) continue;
                            unsigned char* const c = element<unsigned char>(p.c, b, row, col);
                            unsigned w = v[e];
                            if (ARGMAX) {
                                if (w == 0u) *element<int>(p.argmax, b, row, col) = -1;
                            } else if (p.accumulate) {
                                w |= *c != 0 ? 1u : 0u;
                            }
                            *c = static_cast<unsigned char>(w);
                        }
                    }
                }
                // No barrier before the next tile's prologue writes the shared memory: every thread
                // passed the barrier after its last slice (the early stop's included) and the
                // epilogue reads none of it.
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Packing: TgPackParams. A warp makes 32 words at a time: along K (the bytes run along K), 32
// consecutive words of one row, lane l word w0 + l from its own run of 32 bytes, the reads of a warp
// one kilobyte in a row; along the outer dimension, one word of 32 consecutive rows, through the
// transpose. Bound by memory: it reads each byte once.
__device__ __forceinline__ void pack_bits(const TgPackParams& p) {
    const long long outer = p.outer, K = p.k, words = (K + 31) / 32;
    const long long os = p.bytes.row_stride, ks = p.bytes.col_stride;
    const bool along_k = ks == 1 || os != 1;
    // Units of 32 words per product: (row, 32 words) along K, (32 rows, word) across.
    const long long groups = along_k ? (words + 31) / 32 : (outer + 31) / 32;
    const long long per_product = along_k ? outer * groups : groups * words;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
    for (long long u = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; u < p.batch * per_product; u += warps) {
        const long long b = u / per_product, v = u % per_product;
        const unsigned char* const base = element<const unsigned char>(p.bytes, b, 0, 0);
        unsigned x[8];
        long long o, w;
        if (along_k) {
            o = v / groups;
            w = (v % groups) * 32 + lane;
            const int align = run_alignment(base, os, ks);
            load_run32(x, base + o * os + w * 32 * ks, w < words ? run_left(K - w * 32) : 0, align, ks);
            if (w < words) *element<unsigned>(p.words, b, o, w) = bits_of(x);
        } else {
            const long long o0 = (v % groups) * 32, k = (v / groups) * 32 + lane;
            w = v / groups;
            o = o0 + lane;
            const int align = run_alignment(base, ks, os);
            load_run32(x, base + o0 * os + k * ks, k < K ? run_left(outer - o0) : 0, align, os);
            const unsigned word = transpose32(bits_of(x));  // every lane takes part
            if (o < outer) *element<unsigned>(p.words, b, o, w) = word;
        }
    }
}

}  // namespace tg
