// tropical-gemm's device code, piece 3 of 5: the tiled main loop, shared by the Tiled, SplitK and
// Batched kernels (with or without argmax). The pieces before it hold its argmax rescans
// (kernels/argmax_rescan.cuh) and a thread's register tile (kernels/register_tile.cuh: load_fragment,
// track_term, k_step, k_step_slice).

namespace tg {

// A block computes a BM x BN tile of C in K-slices of BK, staged in shared memory as [k][row of A]
// and [k][column of B], in two buffers, so one barrier per slice. While slice s is computed, slice
// s+1 travels from global memory through registers: its loads are issued before the compute and
// their values stored to the other buffer after it, so the compute hides their latency. Each thread
// owns TM x TN results (kernels/register_tile.cuh).

#ifndef TG_DYNAMIC_SHARED
#define TG_DYNAMIC_SHARED extern __shared__  // tests/support/device_emulation.hpp spells it for the host
#endif

// The Batched argmax kernels' panel: the dynamic shared memory their launch gives them (declared
// only where a kernel takes it).
template <bool PANEL, class T>
__device__ __forceinline__ T* panel_memory() {
    if constexpr (PANEL) {
        TG_DYNAMIC_SHARED Vec16<T> panel_smem[];
        return panel_smem[0].v;
    } else {
        return nullptr;
    }
}

template <class Cfg, class S, class T, bool ARGMAX, bool SPLIT = false, bool BATCHED = false>
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
    // PANEL, the Batched argmax kernels (a short K, where a rescan from global memory cost as much as
    // the main loop): slice s is staged at position s % kTgPanelSlices of a panel in dynamic shared
    // memory instead of a double buffer, so that a chunk of kTgPanelSlices slices stays resident
    // until its end, where each thread rescans its own results from it (rescan_panel) before the
    // next chunk's first slice overwrites it.
    constexpr bool PANEL = TRACK && BATCHED;
    static_assert(!PANEL || STAGES == 1, "the panel's chunk ends stash a whole slice at once");
    // f64 has no one-instruction NaN-propagating max: the exact compare-select costs 5 instructions
    // per term (two compares). A slice none of whose inputs can make a NaN term (the barrier ORs
    // each thread's verdict on what it staged) takes a 4-instruction compare-select instead, whose
    // ordered compare never replaces a NaN accumulator either.
    constexpr bool GUARD = !ARGMAX && sizeof(T) == 8 && !IsInt<T>::value;

    // The two double-buffered tiles; with TRACK, after the main loop, the block's (result bits,
    // slice) pairs for the rescan, in A's memory (made large enough for them). With PANEL, the
    // panel's slices instead (A's rows, then B's: kernel_params.h's tg_panel_slice_elements).
    constexpr int A_VECS = PANEL ? 1 : 2 * BK * LDA / VEC, B_VECS = PANEL ? 1 : 2 * BK * LDB / VEC;
    constexpr int RESCAN_VECS = TRACK && !PANEL ? BM * BN * 8 / 16 : 0;
    __shared__ Vec16<T> smem[A_VECS > RESCAN_VECS ? A_VECS : RESCAN_VECS];
    __shared__ Vec16<T> smem_b[B_VECS];
    constexpr long long SLICE = tg_panel_slice_elements(BM, BN, BK, sizeof(T));
    static_assert(SLICE == BK * LDA + BK * LDB + VEC && SLICE % VEC == 0, "the panel's layout is the host's");
    // (PANEL's addresses are written apart from the double buffer's, not as one expression for both:
    // one shared expression moved ptxas's register choices in the plain Batched f32 kernels.)
    T* const tile_a = smem[0].v;
    T* const tile_b = smem_b[0].v;
    T* const panel = panel_memory<PANEL, T>();

    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const long long M = p.m, N = p.n;
    const long long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    // SPLIT, the split-K kernels (see TgGemmParams): K in chunks of whole slices (tg_split_chunk),
    // combined with atomics (SplitK) or, with PANEL, merged as (value, k) pairs one block at a time
    // per tile (the Serial argmax kernels: merge_serial). A template parameter rather than a run-time
    // choice: the values it keeps live cost the 32-bit kernels spills (i32 went from none to 120 bytes).
    static_assert(!SPLIT || (sizeof(T) == 4 && (!ARGMAX || PANEL)),
                  "split-K combines 32-bit results: with atomics, or with argmax as the panel's pairs");
    const long long splits = SPLIT && p.k_splits > 1 ? p.k_splits : 1;
    const long long chunk = SPLIT ? tg_split_chunk(p.k, splits, BK) : p.k;

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
        bool c_vec = !ARGMAX && p.c.col_stride == 1 && p.c.row_stride % VEC == 0 &&
                     reinterpret_cast<unsigned long long>(c_batch) % 16 == 0;
        // PANEL: the argmax too comes from registers, so both go as vectors where both can.
        int* const argmax_batch = PANEL ? element<int>(p.argmax, b, 0, 0) : nullptr;
        if constexpr (PANEL)
            c_vec = VEC == 4 && p.c.col_stride == 1 && p.c.row_stride % VEC == 0 &&
                    reinterpret_cast<unsigned long long>(c_batch) % 16 == 0 && p.argmax.col_stride == 1 &&
                    p.argmax.row_stride % 4 == 0 && reinterpret_cast<unsigned long long>(argmax_batch) % 16 == 0;
        for (long long tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
            for (long long tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
                const long long m0 = tm * BM, n0 = tn * BN;
                StageA sa(a_batch, p.a.row_stride, p.a.col_stride, m0);
                StageB sb(b_batch, p.b.col_stride, p.b.row_stride, n0);
                // Interior tiles of aligned operands load whole stages with 128-bit loads alone.
                const bool fast_tile = a_vec && b_vec && m0 + BM <= M && n0 + BN <= N;

                T acc[TM][TN];
                T sacc[TM][TN];   // dead, and removed, unless TRACK
                int arg[TM][TN];  // dead, and removed, unless ARGMAX
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
                bool unsafe = false;  // dead unless GUARD
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
                    if constexpr (PANEL) {
                        sa.template stash<R, STAGE>(panel + buf * SLICE + h * SK * LDA, ra, a_k_along);
                        sb.template stash<R, STAGE>(panel + buf * SLICE + BK * LDA + h * SK * LDB, rb, b_k_along);
                    } else {
                        sa.template stash<R, STAGE>(tile_a + (buf * BK + h * SK) * LDA, ra, a_k_along);
                        sb.template stash<R, STAGE>(tile_b + (buf * BK + h * SK) * LDB, rb, b_k_along);
                    }
                    sa.next_stage(p.a.col_stride);
                    sb.next_stage(p.b.row_stride);
                };
#pragma unroll
                for (int h = 0; h < STAGES; ++h) {
                    fetch(h);
                    stash(0, h);
                }
                bool exact = true;  // the slice about to be computed may make NaN terms
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
                // With PANEL, slice s is read from position s % kTgPanelSlices and slice s+1 goes to
                // the next position, except at the end of a chunk: there it waits in registers until
                // the chunk's rescan is done.
                for (long long s = 0; s < slices; ++s) {
                    const int buf = static_cast<int>(PANEL ? s % kTgPanelSlices : s & 1);
                    const int next = PANEL ? (buf + 1) % kTgPanelSlices : buf ^ 1;
                    const bool chunk_end = PANEL && next == 0;
                    const T* const a_buf = (PANEL ? panel + buf * SLICE : tile_a + buf * BK * LDA) + ty * VEC;
                    const T* const b_buf =
                        (PANEL ? panel + buf * SLICE + BK * LDA : tile_b + buf * BK * LDB) + tx * VEC;
                    const int k0 = static_cast<int>(s * BK);  // argmax is int32: K < 2^31 there
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
                                    if (kk == 0) k_step_slice<R, T, TM, TN, GROUP_M, GROUP_N, true>(sacc, a_buf, b_buf);
                                    else
                                        k_step_slice<R, T, TM, TN, GROUP_M, GROUP_N, false>(sacc, a_buf + kk * LDA,
                                                                                            b_buf + kk * LDB);
                                } else {
                                    k_step<R, T, TM, TN, GROUP_M, GROUP_N, ARGMAX>(acc, arg, a_buf + kk * LDA,
                                                                                   b_buf + kk * LDB, k0 + kk);
                                }
                            }
                        }
                        // (The panel holds K's slices only: nothing is stashed past the last.)
                        if (!chunk_end && (!PANEL || s + 1 < slices)) stash(next, h);
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
                    if constexpr (PANEL) {
                        if (chunk_end) {
                            rescan_panel<R, T, TM, TN, GROUP_M, GROUP_N, BK, LDA, LDB, SLICE>(acc, arg, panel, ty * VEC,
                                                                                              tx * VEC);
                            __syncthreads();
                            stash(0, 0);
                        }
                    }
                    if constexpr (GUARD) {
                        exact = __syncthreads_or(unsafe);
                        unsafe = false;
                    } else {
                        __syncthreads();
                    }
                }

                if constexpr (SPLIT && !ARGMAX) {
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
                                for (int e = 0; e < VEC; ++e)
                                    v.v[e] = R::finish(acc[i][g * VEC + e]) + T(0);  // -0 -> +0
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

                // The last chunk's rescan (a no-op where the loop ended on a chunk's end).
                if constexpr (PANEL) {
                    rescan_panel<R, T, TM, TN, GROUP_M, GROUP_N, BK, LDA, LDB, SLICE>(acc, arg, panel, ty * VEC,
                                                                                      tx * VEC);
                }
                if constexpr (SPLIT && ARGMAX) {
                    merge_serial<R, T, TM, TN, GROUP_M, GROUP_N>(p, b, m0, n0, ty * VEC, tx * VEC, c_vec, acc, arg,
                                                                 k_begin);
                    continue;  // (merge_serial ends on a barrier: the next tile may stage into the panel)
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
                            if constexpr (!STAGE) v.v[e] = v.v[e] + T(0);  // -0 -> +0
                        }
                        if (c_vec && col0 + VEC <= N) {
                            Vec16<T>* const c = reinterpret_cast<Vec16<T>*>(c_batch + row * p.c.row_stride + col0);
                            if (p.accumulate) {
                                const Vec16<T> old = *c;
#pragma unroll
                                for (int e = 0; e < VEC; ++e) v.v[e] = R::plus(old.v[e] + T(0), v.v[e]);
                            }
                            *c = v;
                            if constexpr (PANEL) {
                                Vec16<int> w;
#pragma unroll
                                for (int e = 0; e < VEC; ++e) w.v[e] = panel_argmax(arg[i][g * VEC + e]);
                                *reinterpret_cast<Vec16<int>*>(argmax_batch + row * p.argmax.row_stride + col0) = w;
                            }
                            continue;
                        }
#pragma unroll
                        for (int e = 0; e < VEC; ++e) {
                            const long long col = col0 + e;
                            if (col >= N) continue;
                            T* const c = element<T>(p.c, b, row, col);
                            T w = v.v[e];
                            if constexpr (PANEL) {
                                *element<int>(p.argmax, b, row, col) = panel_argmax(arg[i][g * VEC + e]);
                            } else if constexpr (TRACK) {
                                const int local = static_cast<int>((row - m0) * BN + (col - n0));
                                reinterpret_cast<int2*>(smem)[local] =
                                    make_int2(bits(acc[i][g * VEC + e]), arg[i][g * VEC + e]);
                            } else if constexpr (ARGMAX) {
                                *element<int>(p.argmax, b, row, col) = arg[i][g * VEC + e];
                            } else if (p.accumulate) {
                                w = R::plus(*c + T(0), w);  // an old -0 is read as +0, as every input
                            }
                            *c = w;
                        }
                    }
                }
                if constexpr (TRACK && !PANEL) {
                    // The rescan: each result whose last changing slice is known looks for the
                    // first k of that slice whose term equals it.
                    __syncthreads();
                    rescan_each<R, T, BM, BN, BK, THREADS>(p, b, m0, n0, K, smem);
                }
                // Before the next tile's prologue writes the shared memory the rescan read.
                if constexpr (TRACK) __syncthreads();
            }
        }
    }
}

}  // namespace tg
