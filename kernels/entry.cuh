// tropical-gemm's device code, last piece: what an entry point runs, by variant. The host writes one
// entry point per row of kernels/catalogue.def (src/catalogue/kernel_source.cpp) that calls one of
// these with the row's values; the names it uses (the variant and semiring tags, the element type)
// are the row's own words.

namespace tg {

// The variants of a product (KernelVariant on the host).
struct Tiled {};    // the big-tile main loop
struct SplitK {};   // the same over chunks of K, combined with atomics; with argmax, the Small loop
                    // with K split among groups of a block's threads
struct Batched {};  // the main loop with tiles for many small products
struct Small {};    // 32 x 32 tiles, 2 x 2 results per thread
struct Tiny {};     // the Small loop over 16 x 16 tiles and slices of 8, for many tiny products
struct Packed {};   // OrAnd on operands packed into 32-bit words along K (kernels/orand.cuh)
struct Dense {};    // whole contiguous products of at most 32^3, as 16-byte vectors (kernels/dense.cuh)
struct Serial {};   // argmax: the Batched loop over chunks of K, merged one block at a time per tile
struct Wide {};     // whole contiguous products of up to 64 x 64 x 32, 4 x 4 results a thread (kernels/wide.cuh)
struct Vector {};   // A of a few rows times B, K split among a block's threads (kernels/vector.cuh)
struct Column {};   // A times B of a few columns, a warp per row of A, K split among its lanes (kernels/column.cuh)

// A product kernel of one row: C = A (x) B, with or without the argmax.
template <class Variant, bool ARGMAX, class S, class T, class Cfg, int THREADS>
__device__ __forceinline__ void product(const TgGemmParams& p) {
    // The Small loop's rows split each slice among bk / sk groups of the tile's threads (one group
    // but for the argmax SplitK rows), and so do the Vector and Column rows: src/catalogue/catalogue.hpp's
    // k_groups.
    constexpr bool SMALL_LOOP =
        IsSame<Variant, Small>::value || IsSame<Variant, Tiny>::value || (ARGMAX && IsSame<Variant, SplitK>::value);
    constexpr int K_GROUPS =
        SMALL_LOOP || IsSame<Variant, Vector>::value || IsSame<Variant, Column>::value ? Cfg::bk / Cfg::sk : 1;
    static_assert(Cfg::threads * K_GROUPS == THREADS,
                  "the row's threads must be its tile's: (bm / tm) * (bn / tn), times bk / sk for the Small loop");
    if constexpr (IsSame<S, LogPlus>::value) {
        // Tiled f32: factored where a tile's values allow (kernels/logplus_factored.cuh); other Tiled
        // rows one k group (bk = sk); Small: bk / sk groups (kernels/logplus.cuh).
        static_assert(!ARGMAX && (IsSame<Variant, Tiled>::value || IsSame<Variant, Small>::value),
                      "LogPlus products are Tiled or Small kernels without argmax");
        if constexpr (IsSame<Variant, Tiled>::value && IsSame<T, float>::value) gemm_logplus_factored<Cfg, THREADS>(p);
        else gemm_logplus<Cfg, T, Cfg::bk / Cfg::sk, THREADS>(p);
    } else if constexpr (IsSame<S, OrAnd>::value) {
        // Tiled: byte operands, packed as they are staged; Packed: the caller's words.
        static_assert(
            IsSame<T, unsigned char>::value && (IsSame<Variant, Tiled>::value || IsSame<Variant, Packed>::value),
            "OrAnd products are Tiled (bytes) or Packed (words) kernels of u8");
        orand_gemm<Cfg, IsSame<Variant, Packed>::value, ARGMAX>(p);
    } else if constexpr (IsHalf<T>::value || IsSame<T, short>::value) {
        // 16-bit elements in pairs (kernels/packed16_loop.cuh).
        static_assert(!ARGMAX && IsSame<Variant, Tiled>::value, "16-bit products are Tiled kernels without argmax");
        gemm_packed16<Cfg, S, T, THREADS>(p);
    } else if constexpr (SMALL_LOOP) {
        gemm_small<Cfg, S, T, ARGMAX, THREADS>(p);
    } else if constexpr (IsSame<Variant, Vector>::value) {
        gemm_vector<Cfg, S, T, ARGMAX, THREADS>(p);
    } else if constexpr (IsSame<Variant, Column>::value) {
        gemm_column<Cfg, S, T, ARGMAX, THREADS>(p);
    } else if constexpr (IsSame<Variant, Dense>::value) {
        gemm_dense<Cfg, S, T, ARGMAX>(p);
    } else if constexpr (IsSame<Variant, Wide>::value) {
        gemm_wide<Cfg, S, T, ARGMAX>(p);
    } else {
        constexpr bool SERIAL = IsSame<Variant, Serial>::value;
        static_assert(!SERIAL || ARGMAX, "Serial rows are argmax rows (plain products split K with atomics)");
        gemm<Cfg, S, T, ARGMAX, IsSame<Variant, SplitK>::value || SERIAL, IsSame<Variant, Batched>::value || SERIAL>(p);
    }
}

// A counting product of one row (the variant is the row's tile and its choice in src/gemm/plan.cpp:
// every variant runs the same loop).
template <class Variant, class T, class Cfg, int THREADS>
__device__ __forceinline__ void counting_product(const TgCountingParams& p) {
    static_assert(Cfg::threads == THREADS, "the row's threads must be its tile's: (bm / tm) * (bn / tn)");
    gemm_counting<Cfg, T>(p);
}

// A LogPlus gradient kernel of one row (Tiled: one k group; Small: bk / sk groups).
template <class Variant, class T, class Cfg, int THREADS>
__device__ __forceinline__ void log_gradient(const TgLogBackwardParams& p) {
    // Tiled f32: factored where a tile's values allow (kernels/logplus_factored_backward.cuh).
    if constexpr (IsSame<Variant, Tiled>::value && IsSame<T, float>::value) logplus_gradient_factored<Cfg, THREADS>(p);
    else logplus_gradient<Cfg, T, Cfg::bk / Cfg::sk, THREADS>(p);
}

// A Scatter kernel of one row: the gradient of A (GRAD_A) or B. It reads its block size at run time
// (the launch gives it the row's THREADS), so the row's threads need only suit it.
template <class T, bool GRAD_A, int THREADS>
__device__ __forceinline__ void scatter(const TgBackwardParams& p) {
    static_assert(THREADS > 0 && THREADS <= 1024, "the row's threads must fit a block");
    // grad_B's shared-memory path gives each column of a slab threads / SLAB threads, SLAB apart.
    static_assert(GRAD_A || THREADS % (kTgBackwardBSlabBytes / sizeof(T)) == 0,
                  "a grad_B row's threads must be a multiple of a slab's columns (kTgBackwardBSlabBytes / sizeof(T))");
    backward<T, GRAD_A>(p);
}

// The PackBits kernel: booleans in bytes packed along K into 32-bit words, a warp per 32 of them.
template <int THREADS>
__device__ __forceinline__ void pack(const TgPackParams& p) {
    static_assert(THREADS > 0 && THREADS <= 1024 && THREADS % 32 == 0,
                  "the PackBits row's threads must be whole warps (pack_bits and plan_pack count warps), a block");
    pack_bits(p);
}

// The Backtrack kernel: a thread per row of the chain.
template <int THREADS>
__device__ __forceinline__ void walk(const TgBacktrackParams& p) {
    static_assert(THREADS > 0 && THREADS <= 1024, "the Backtrack row's threads must fit a block");
    backtrack(p);
}

}  // namespace tg
