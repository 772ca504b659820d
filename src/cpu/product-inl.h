// One task of a CPU product, once per SIMD target (see cpu/ring-inl.h): the loops of BLIS around
// the micro-kernels of cpu/kernel-inl.h.
//
//   for each NC columns of the task:            B block (KC x NC) packed once, kept in L2/L3
//     for each KC terms:
//       for each MC rows of the task:           A block (MC x KC) packed, kept in L2
//         for each NR-column micro-panel of B:  stays in L1 while
//           for each MR-row micro-panel of A:   A streams past it
//             micro-kernel, then the tile goes to C
//
// A tile's result goes to C after every KC terms: the first block writes it, later ones (and every
// block when accumulating) combine it with what C holds by the exact (+), which is associative, so
// the blocks of K give what one pass over K gives, bit for bit. With argmax a later block's best
// replaces C only where it is strictly better (or the first NaN), so that ties keep the smallest k.
#if defined(TROPICAL_CPU_PRODUCT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_PRODUCT_INL_H_
#undef TROPICAL_CPU_PRODUCT_INL_H_
#else
#define TROPICAL_CPU_PRODUCT_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <hwy/highway.h>

#include <tropical/error.hpp>
#include "cpu/kernel-inl.h"
#include "cpu/logplus-inl.h"
#include "cpu/pack-inl.h"
#include "cpu/product.hpp"
#include "cpu/ring-inl.h"
#include "cpu/workspace.hpp"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Where a tile of C goes and how: `first` writes it, otherwise it is combined with C by (+).
template <class T>
struct TileTarget {
    T* c;
    std::int64_t rs, cs;
    std::int32_t* idx;  // argmax only
    std::int64_t idx_rs, idx_cs;
    std::int64_t rows, cols;
    bool first;
};

// A tile's accumulators (MR rows of NR, in `acc`) into C: vectors where the tile is whole and C's
// rows are contiguous, element by element at C's edges.
template <class R, int MR, int NV, class D>
HWY_INLINE void StoreTile(D d, const hn::TFromD<D>* HWY_RESTRICT acc, const TileTarget<hn::TFromD<D>>& to) {
    using T = hn::TFromD<D>;
    constexpr std::int64_t L = kLanes<T>, NR = NV * L;
    if (to.rows == MR && to.cols == NR && to.cs == 1) {
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                T* p = to.c + i * to.rs + j * L;
                auto v = R::Finish(d, hn::Load(d, acc + i * NR + j * L));
                if (!to.first) v = Plus<R>(hn::Add(hn::LoadU(d, p), hn::Zero(d)), v);  // an old -0 is read as +0
                hn::StoreU(v, d, p);
            }
        }
        return;
    }
    for (std::int64_t i = 0; i < to.rows; ++i) {
        for (std::int64_t j = 0; j < to.cols; ++j) {
            T& out = to.c[i * to.rs + j * to.cs];
            const T v = R::Finish(acc[i * NR + j]);
            out = to.first ? v : PlusScalar<R>(out + T(0), v);
        }
    }
}

// A tile's best values and their k into C and the argmax.
template <class R, int NR, class T, class TI>
HWY_INLINE void StoreArgmaxTile(const T* HWY_RESTRICT values, const TI* HWY_RESTRICT indices, const TileTarget<T>& to) {
    for (std::int64_t i = 0; i < to.rows; ++i) {
        for (std::int64_t j = 0; j < to.cols; ++j) {
            T& out = to.c[i * to.rs + j * to.cs];
            std::int32_t& out_k = to.idx[i * to.idx_rs + j * to.idx_cs];
            const T v = R::Finish(values[i * NR + j]);
            const auto k = static_cast<std::int32_t>(indices[i * NR + j]);
            if (to.first || (k >= 0 && (R::Better(v, out) || (IsNaN(v) && !IsNaN(out))))) {
                out = v;
                out_k = k;
            }
        }
    }
}

// K = 0: every output is the zero (with accumulate: C (+) zero), every argmax -1.
template <class R>
void EmptySum(const ProductTask& t) {
    using T = typename R::Elem;
    auto* c = static_cast<T*>(t.c.data);
    auto* idx = static_cast<std::int32_t*>(t.idx.data);
    for (std::int64_t i = t.row0; i < t.row1; ++i) {
        for (std::int64_t j = t.col0; j < t.col1; ++j) {
            T& out = c[i * t.c.rs + j * t.c.cs];
            out = t.accumulate ? PlusScalar<R>(out + T(0), R::Zero()) : R::Zero();
            if (t.argmax) idx[i * t.idx.rs + j * t.idx.cs] = -1;
        }
    }
}

template <class R, bool kArgmax>
HWY_NOINLINE void RunBlocked(const ProductTask& t) {
    using T = typename R::Elem;
    using Shape = Tile<R, kArgmax>;
    constexpr int MR = Shape::MR, NV = Shape::NV;
    constexpr std::int64_t NR = NV * static_cast<std::int64_t>(kLanes<T>);
    constexpr Blocks blocks = blocks_for(sizeof(T), MR, NR);
    using D = hn::ScalableTag<T>;
    const D d;
    const PackedBLayout shared{t.k, t.n, NR, blocks};

    // Scratch for the blocks this task really needs (small tasks take little), with one flag per
    // micro-panel after the values.
    const std::int64_t kc_max = std::min(blocks.kc, t.k);
    const std::int64_t mc_max = std::min(blocks.mc, (t.row1 - t.row0 + MR - 1) / MR * MR);
    const std::int64_t nc_max = std::min(blocks.nc, (t.col1 - t.col0 + NR - 1) / NR * NR);
    const auto bytes = [](std::int64_t width, std::int64_t kc) {
        return static_cast<std::size_t>(width * kc) * sizeof(T) + static_cast<std::size_t>(width);
    };
    T* a_pack = static_cast<T*>(scratch(Scratch::PackedA, bytes(mc_max, kc_max)));
    T* b_pack = t.packed_b ? nullptr : static_cast<T*>(scratch(Scratch::PackedB, bytes(nc_max, kc_max)));
    bool* a_unsafe = reinterpret_cast<bool*>(a_pack + mc_max * kc_max);
    bool* b_unsafe = t.packed_b ? nullptr : reinterpret_cast<bool*>(b_pack + nc_max * kc_max);

    const auto* a = static_cast<const T*>(t.a.data);
    const auto* b = static_cast<const T*>(t.b.data);
    auto* c = static_cast<T*>(t.c.data);
    auto* idx = static_cast<std::int32_t*>(t.idx.data);
    for (std::int64_t jc = t.col0; jc < t.col1; jc += blocks.nc) {
        const std::int64_t nc = std::min(blocks.nc, t.col1 - jc);
        for (std::int64_t pc = 0; pc < t.k; pc += blocks.kc) {
            const std::int64_t kc = std::min(blocks.kc, t.k - pc);
            if (t.packed_b) {  // packed for every task (the task spans every column: jc is the block's)
                b_pack = static_cast<T*>(t.packed_b) + shared.values_at(jc, pc);
                b_unsafe = static_cast<bool*>(t.packed_b) + shared.values_bytes(sizeof(T)) + shared.flags_at(jc, pc);
            } else {
                // B's columns are the panels' rows: its transpose is packed like A.
                PackBlock<R, NR>(b + pc * t.b.rs + jc * t.b.cs, t.b.cs, t.b.rs, nc, kc, b_pack, b_unsafe);
            }
            const bool first = pc == 0 && (kArgmax || !t.accumulate);
            for (std::int64_t ic = t.row0; ic < t.row1; ic += blocks.mc) {
                const std::int64_t mc = std::min(blocks.mc, t.row1 - ic);
                PackBlock<R, MR>(a + ic * t.a.rs + pc * t.a.cs, t.a.rs, t.a.cs, mc, kc, a_pack, a_unsafe);
                for (std::int64_t jp = 0; jp * NR < nc; ++jp) {
                    const T* bp = b_pack + jp * NR * kc;
                    for (std::int64_t ip = 0; ip * MR < mc; ++ip) {
                        const T* ap = a_pack + ip * MR * kc;
                        const std::int64_t i0 = ic + ip * MR, j0 = jc + jp * NR;
                        const TileTarget<T> to{c + i0 * t.c.rs + j0 * t.c.cs,
                                               t.c.rs,
                                               t.c.cs,
                                               kArgmax ? idx + i0 * t.idx.rs + j0 * t.idx.cs : nullptr,
                                               t.idx.rs,
                                               t.idx.cs,
                                               std::min<std::int64_t>(MR, mc - ip * MR),
                                               std::min<std::int64_t>(NR, nc - jp * NR),
                                               first};
                        // Integer rings have no NaN: `nan` is constantly false and the NaN-safe kernel
                        // is not even expanded.
                        const bool nan = R::kMayNaN && (a_unsafe[ip] || b_unsafe[jp]);
                        // The tile's accumulators (and argmax indices) on their way to C.
                        HWY_ALIGN T acc[MR * NR];
                        if constexpr (kArgmax) {
                            HWY_ALIGN hn::TFromD<hn::RebindToSigned<D>> at[MR * NR];
                            if (R::kMayNaN && nan) ArgmaxTile<R, MR, NV, R::kMayNaN>(d, ap, bp, kc, pc, acc, at);
                            else ArgmaxTile<R, MR, NV, false>(d, ap, bp, kc, pc, acc, at);
                            StoreArgmaxTile<R, NR>(acc, at, to);
                        } else {
                            if (R::kMayNaN && nan) ProductTile<R, MR, NV, R::kMayNaN>(d, ap, bp, kc, acc);
                            else ProductTile<R, MR, NV, false>(d, ap, bp, kc, acc);
                            StoreTile<R, MR, NV>(d, acc, to);
                        }
                    }
                }
            }
        }
    }
}

// Block t.pack_block of B into t.packed_b (PackedBLayout), for the tiles of the argmax kernel or
// the plain one.
template <class R, bool kArgmax>
void PackSharedBlock(const ProductTask& t) {
    using T = typename R::Elem;
    using Shape = Tile<R, kArgmax>;
    constexpr std::int64_t NR = Shape::NV * static_cast<std::int64_t>(kLanes<T>);
    const PackedBLayout shared{t.k, t.n, NR, blocks_for(sizeof(T), Shape::MR, NR)};
    const std::int64_t jc = t.pack_block / shared.k_blocks() * shared.blocks.nc;
    const std::int64_t pc = t.pack_block % shared.k_blocks() * shared.blocks.kc;
    const auto* b = static_cast<const T*>(t.b.data);
    PackBlock<R, NR>(b + pc * t.b.rs + jc * t.b.cs, t.b.cs, t.b.rs, shared.width(jc),
                     std::min(shared.blocks.kc, t.k - pc), static_cast<T*>(t.packed_b) + shared.values_at(jc, pc),
                     static_cast<bool*>(t.packed_b) + shared.values_bytes(sizeof(T)) + shared.flags_at(jc, pc));
}

template <class R>
void RunRing(const ProductTask& t) {
    if (t.packed_b && t.pack_block >= 0) {
        if (t.argmax) PackSharedBlock<R, true>(t);
        else PackSharedBlock<R, false>(t);
        return;
    }
    if (t.row0 >= t.row1 || t.col0 >= t.col1) return;
    if (t.k == 0) return EmptySum<R>(t);
    if (t.argmax) RunBlocked<R, true>(t);
    else RunBlocked<R, false>(t);
}

template <class R>
TileShape TileOf(bool argmax) {
    constexpr auto lanes = static_cast<std::int64_t>(kLanes<typename R::Elem>);
    if (argmax) return {Tile<R, true>::MR, Tile<R, true>::NV * lanes};
    return {Tile<R, false>::MR, Tile<R, false>::NV * lanes};
}

// LogPlus takes f32 and f64 alone (validation refuses the others before any task is made).
template <class T>
[[noreturn]] void NotLogPlusType() {
    throw Error(Status::Internal,
                "a LogPlus task of an integer type reached the CPU kernels; validation refuses those");
}

// The one switch over semirings: a new one is a ring (cpu/ring-inl.h) and a case in each.
template <class T>
void RunProduct(const ProductTask& t) {
    switch (t.semiring) {
    case Semiring::MaxPlus: return RunRing<MaxPlusRing<T>>(t);
    case Semiring::MinPlus: return RunRing<MinPlusRing<T>>(t);
    case Semiring::MaxMul: return RunRing<MaxMulRing<T>>(t);
    case Semiring::MaxMin: return RunRing<MaxMinRing<T>>(t);
    case Semiring::MinMax: return RunRing<MinMaxRing<T>>(t);
    case Semiring::Counting: break;  // pairs: cpu/host_counting.cpp
    case Semiring::OrAnd: break;     // booleans: cpu/orand.cpp (cpu::run routes OrAnd there)
    case Semiring::LogPlus:          // (+) combines every term: its own loop (cpu/logplus-inl.h)
        if constexpr (std::is_floating_point_v<T>) return RunLogPlus<T>(t);
        else NotLogPlusType<T>();
    }
}

template <class T>
TileShape TileFor(Semiring s, bool argmax) {
    switch (s) {
    case Semiring::MaxPlus: return TileOf<MaxPlusRing<T>>(argmax);
    case Semiring::MinPlus: return TileOf<MinPlusRing<T>>(argmax);
    case Semiring::MaxMul: return TileOf<MaxMulRing<T>>(argmax);
    case Semiring::MaxMin: return TileOf<MaxMinRing<T>>(argmax);
    case Semiring::MinMax: return TileOf<MinMaxRing<T>>(argmax);
    case Semiring::Counting: break;
    case Semiring::OrAnd: break;  // booleans: cpu/orand.cpp
    case Semiring::LogPlus:
        if constexpr (std::is_floating_point_v<T>)
            return {LogTileShape::MR, LogTileShape::NV * static_cast<std::int64_t>(kLanes<T>)};
        else NotLogPlusType<T>();
    }
    return {};
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_PRODUCT_INL_H_
