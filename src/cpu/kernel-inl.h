// The register-tiled micro-kernels of the CPU path, once per SIMD target (see cpu/ring-inl.h).
//
// A micro-kernel computes an MR x NR tile of C over kc terms from two packed micro-panels: A's holds
// MR values per k (broadcast one by one), B's holds NR = NV vectors per k. Each term costs one
// Times and one Accumulate per lane, so the tile is as large as the registers allow: MR x NV
// accumulators, NV vectors of B, the broadcast A value and the ring's temporaries.
#if defined(TROPICAL_CPU_KERNEL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_KERNEL_INL_H_
#undef TROPICAL_CPU_KERNEL_INL_H_
#else
#define TROPICAL_CPU_KERNEL_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include <hwy/highway.h>

#include "cpu/ring-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vector registers of the target: 32 with AVX-512 and NEON, 16 with AVX2 and SSE4. The portable
// fallback (EMU128 or SCALAR) keeps its "vectors" in memory; its tile only has to be correct.
inline constexpr int kRegisters =
    (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_NEON) ? 32 : 16;

// The register tile of ring R: MR rows by NV vectors. Plain: MR * NV accumulators, the broadcast A
// value, the term and the ring's temporaries; with argmax an index beside each accumulator, the
// vector of k and a mask. x86 adds B's vectors straight from memory (an operand of the add), so
// they need no registers there; NEON holds them. On AVX2 4 x 3 measured 6% faster than 6 x 2 (fewer
// broadcasts per term), in the kernel alone and in whole products.
template <class R, bool kArgmax>
struct Tile {
    static constexpr int NV = kArgmax && kRegisters < 32 ? 2 : 3;
    static constexpr int kHeldB = HWY_ARCH_X86 ? 0 : NV;
    static constexpr int kFree = kRegisters - kHeldB - 2 - R::kTemporaries - (kArgmax ? 2 : 0);
    static constexpr int kPerRow = NV * (kArgmax ? 2 : 1);
    static constexpr int MR = kFree / kPerRow < 8 ? kFree / kPerRow : 8;
    static_assert(MR >= 1, "no register tile fits");
};

template <class T>
inline constexpr std::size_t kLanes = HWY_LANES(T);

// out[i * NR + j] = (+)_p a[p][i] (x) b[p][j] over kc terms of the packed micro-panels a (MR per
// p) and b (NV vectors per p), as accumulators (R::Finish makes them results). kNaN: terms may be
// NaN (a panel holds an unsafe value). Not inlined into the blocking loops on purpose: there GCC
// scheduled the integer tiles' adds ahead of their max and spilled 8 of the 12 accumulators on
// every step; on its own the tile keeps them all in registers and stores them once, at the end.
template <class R, int MR, int NV, bool kNaN, class D>
HWY_NOINLINE void ProductTile(D d, const hn::TFromD<D>* HWY_RESTRICT a, const hn::TFromD<D>* HWY_RESTRICT b,
                              std::size_t kc, hn::TFromD<D>* HWY_RESTRICT out) {
    using T = hn::TFromD<D>;
    constexpr std::size_t L = kLanes<T>;
    hn::Vec<D> acc[MR][NV];
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) acc[i][j] = hn::Set(d, R::Init());
    }
    for (std::size_t p = 0; p < kc; ++p, a += MR, b += NV * L) {
        hn::Vec<D> bv[NV];
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) bv[j] = hn::Load(d, b + j * L);
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            const auto av = hn::Set(d, a[i]);
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                acc[i][j] = Accumulate<R, kNaN>(Term<R, kNaN>(av, bv[j]), acc[i][j]);
            }
        }
    }
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) hn::Store(acc[i][j], d, out + (i * NV + j) * L);
    }
}

// The same with the argmax: the best values into `best` and the k that reached each into `idx` (as
// signed integers of T's width; -1 where no term beat the start). Terms replace the best only when
// strictly better (or the first NaN), so that ties keep the smallest k. k counts from k0.
template <class R, int MR, int NV, bool kNaN, class D, class DI = hn::RebindToSigned<D>>
HWY_NOINLINE void ArgmaxTile(D d, const hn::TFromD<D>* HWY_RESTRICT a, const hn::TFromD<D>* HWY_RESTRICT b,
                             std::size_t kc, std::int64_t k0, hn::TFromD<D>* HWY_RESTRICT best_out,
                             hn::TFromD<DI>* HWY_RESTRICT idx_out) {
    using T = hn::TFromD<D>;
    using TI = hn::TFromD<DI>;
    constexpr std::size_t L = kLanes<T>;
    const DI di;
    hn::Vec<D> best[MR][NV];
    hn::Vec<DI> idx[MR][NV];
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            best[i][j] = hn::Set(d, R::Init());
            idx[i][j] = hn::Set(di, TI(-1));
        }
    }
    auto k = hn::Set(di, static_cast<TI>(k0));
    const auto one = hn::Set(di, TI(1));
    for (std::size_t p = 0; p < kc; ++p, a += MR, b += NV * L) {
        hn::Vec<D> bv[NV];
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) bv[j] = hn::Load(d, b + j * L);
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            const auto av = hn::Set(d, a[i]);
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                const auto t = Term<R, kNaN>(av, bv[j]);
                auto take = R::Better(t, best[i][j]);
                if constexpr (kNaN) take = hn::Or(take, hn::AndNot(hn::IsNaN(best[i][j]), hn::IsNaN(t)));
                best[i][j] = hn::IfThenElse(take, t, best[i][j]);
                idx[i][j] = hn::IfThenElse(hn::RebindMask(di, take), k, idx[i][j]);
            }
        }
        k = hn::Add(k, one);
    }
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            hn::Store(best[i][j], d, best_out + (i * NV + j) * L);
            hn::Store(idx[i][j], di, idx_out + (i * NV + j) * L);
        }
    }
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_KERNEL_INL_H_
