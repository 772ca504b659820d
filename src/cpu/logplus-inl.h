// LogPlus products on the CPU, once per SIMD target (see cpu/ring-inl.h): one task of
// C[i,j] = log sum_k exp(A[i,k] + B[k,j]) (cpu/product-inl.h's RunProduct sends LogPlus here).
//
// Why a loop of its own: (+) combines every term, so a result is not one of its terms and the
// rings' accumulators (one value, (+) a max or a min) cannot hold it. As in kernels/logplus.cuh,
// each result keeps a reference r, an integer in base 2, and the sum of its terms' weights
// 2^(t * log2e - r); the vectors run along the columns of C, MR rows by NV vectors a tile:
//
//   for each MC rows of the task, NC columns:  every result's r and sum wait in scratch between blocks
//     for each KC terms:                       A's block packed as [k][row] panels of MR rows
//       for each NR = NV vectors of columns:   B's panel packed as [k][column]
//         for each MR rows, each slice of 16 terms:
//           the slice's largest term t_max (a max-plus pass); r = max(r, floor(t_max * log2e)), the
//           sums scaled by the exact power of two 2^(r_old - r); the slice's weights summed
//     then every result finished into C (scalar, in double for f32, long double for f64)
//
// So every weight is at most 2^(1 + a rounding), the largest term of all has one of at least about
// 1, nothing overflows and nothing that matters underflows; a result's sum is taken in three levels
// (16 terms, 16 slices, the rest) so that rounding grows with 32 + K / 256 additions, not with K.
// The bound, for a result C of K terms: |error| <= (32 + K / 256 + 8) * 2^-p + 2^-p * |C| or so,
// p = 24 (f32) or 53 (f64): the sums' roundings, 2^x's and t * log2e - r's, and log2e rounded to T
// (common to every term: dividing by that same float at the end makes a lone term come back as
// itself). For K = 8192, f32: below 5e-6 + 6e-8 |C|; measured in tests/cpu_logplus_test.cpp.
//
// Special values follow src/reference/reference.hpp: a panel holding NaN or +inf takes the tile that
// lets them in (the slice's max propagates NaN; a reference of NaN or +inf is final, the result
// itself, as on the GPU), the others a tile without those tests (-inf is an ordinary input there:
// its weight is 0). Finite inputs beyond LogConstants::kLargest (2^22 for f32) would break the exact
// integers of the references: a task that holds one is computed by the scalar path instead, in the
// wider type, as the reference does it.
#if defined(TROPICAL_CPU_LOGPLUS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_LOGPLUS_INL_H_
#undef TROPICAL_CPU_LOGPLUS_INL_H_
#else
#define TROPICAL_CPU_LOGPLUS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <hwy/highway.h>

#include "cpu/kernel-inl.h"
#include "cpu/logplus_math-inl.h"
#include "cpu/product.hpp"
#include "cpu/workspace.hpp"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The register tile: MR x NV sums and references in the sum pass, with B's vectors, the broadcast
// A value and 2^x's temporaries. 32 registers: 4 x 2; 16: 2 x 2.
struct LogTileShape {
    static constexpr int MR = kRegisters >= 32 ? 4 : 2;
    static constexpr int NV = 2;
};

// Terms a slice (a sum of its own), and the blocks: a KC block is 16 slices (its sums join the
// total at its end), A's MC x KC block and the MC x NC results' state stay in L2.
inline constexpr std::int64_t kLogSlice = 16, kLogKC = 256, kLogMC = 64, kLogNCWanted = 256;

// A value that may make a NaN term or a final reference: NaN or +inf.
template <class T>
HWY_INLINE bool LogSpecial(T x) {
    return !(x < std::numeric_limits<T>::infinity());
}

// MR rows by NV vectors of results over kc terms of the packed panels a ([k][MR]) and b ([k][NR]):
// their references and totals (rows `ss` apart) read, moved and written back. kSpecial: the panels
// may hold NaN or +inf.
template <class T, int MR, int NV, bool kSpecial>
HWY_NOINLINE void LogTile(const T* HWY_RESTRICT a, const T* HWY_RESTRICT b, std::int64_t kc, T* HWY_RESTRICT ref,
                          T* HWY_RESTRICT total, std::int64_t ss) {
    using D = hn::ScalableTag<T>;
    const D d;
    constexpr std::int64_t L = kLanes<T>, NR = NV * L;
    const auto inf = hn::Set(d, std::numeric_limits<T>::infinity());
    const auto log2e = hn::Set(d, LogConstants<T>::kLog2e);
    hn::Vec<D> r[MR][NV], group[MR][NV];
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            r[i][j] = hn::Load(d, ref + i * ss + j * L);
            group[i][j] = hn::Zero(d);
        }
    }
    for (std::int64_t s0 = 0; s0 < kc; s0 += kLogSlice) {
        const std::int64_t len = std::min(kLogSlice, kc - s0);
        const T* as = a + s0 * MR;
        const T* bs = b + s0 * NR;
        // The slice's largest terms (NaN where a term is NaN).
        hn::Vec<D> top[MR][NV];
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) top[i][j] = hn::Neg(inf);
        }
        for (std::int64_t p = 0; p < len; ++p) {
            HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
                const auto av = hn::Set(d, as[p * MR + i]);
                HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                    const auto t = hn::Add(av, hn::Load(d, bs + p * NR + j * L));
                    if constexpr (kSpecial)
                        top[i][j] = hn::IfThenElse(hn::Or(hn::Gt(t, top[i][j]), hn::IsNaN(t)), t, top[i][j]);
                    else top[i][j] = hn::Max(top[i][j], t);
                }
            }
        }
        // The references move up to the slice's largest term; a NaN or +inf one makes them final.
        hn::Vec<D> neg_r[MR][NV];
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                const auto m = top[i][j];
                const auto final_r = hn::Not(hn::Lt(r[i][j], inf));
                auto next = hn::IfThenElse(final_r, r[i][j], hn::Max(r[i][j], hn::Floor(hn::Mul(m, log2e))));
                if constexpr (kSpecial) {
                    // A NaN reference stays; +inf gives way to a NaN term; a finite one to either.
                    const auto take_m = hn::Or(hn::IsNaN(m), hn::Not(final_r));
                    const auto special = hn::Or(final_r, hn::Not(hn::Lt(m, inf)));
                    next = hn::IfThenElse(special, hn::IfThenElse(take_m, m, r[i][j]), next);
                }
                const auto scale = ExactPowerOfTwo(d, hn::Sub(r[i][j], next));
                group[i][j] = hn::Mul(group[i][j], scale);
                T* tot = total + i * ss + j * L;
                hn::Store(hn::Mul(hn::Load(d, tot), scale), d, tot);
                r[i][j] = next;
                // Against a final reference every weight is 0: x is -inf (NaN in a special tile, where
                // Exp2 takes it as -inf), so the sums of those results stay finite.
                neg_r[i][j] = hn::Neg(hn::IfThenElse(hn::Lt(next, inf), next, inf));
            }
        }
        hn::Vec<D> sum[MR][NV];
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) sum[i][j] = hn::Zero(d);
        }
        for (std::int64_t p = 0; p < len; ++p) {
            HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
                const auto av = hn::Set(d, as[p * MR + i]);
                HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                    const auto t = hn::Add(av, hn::Load(d, bs + p * NR + j * L));
                    sum[i][j] = hn::Add(sum[i][j], Exp2<kSpecial>(d, hn::MulAdd(t, log2e, neg_r[i][j])));
                }
            }
        }
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) group[i][j] = hn::Add(group[i][j], sum[i][j]);
        }
    }
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            hn::Store(r[i][j], d, ref + i * ss + j * L);
            T* tot = total + i * ss + j * L;
            hn::Store(hn::Add(hn::Load(d, tot), group[i][j]), d, tot);
        }
    }
}

// Rows [0, rows) and terms [0, kc) of an operand (element (i, p) at src[i * rs + p * cs]) as panels
// of W rows, each [p][row], the last padded with 0 (computed, never stored). Returns, per panel in
// `special`, whether it holds NaN or +inf.
template <int W, class T>
void PackLogPanels(const T* src, std::int64_t rs, std::int64_t cs, std::int64_t rows, std::int64_t kc, T* dst,
                   bool* special) {
    for (std::int64_t i0 = 0; i0 < rows; i0 += W) {
        const std::int64_t r = std::min<std::int64_t>(W, rows - i0);
        bool any = false;
        for (std::int64_t p = 0; p < kc; ++p, dst += W) {
            for (std::int64_t i = 0; i < r; ++i) {
                const T x = src[(i0 + i) * rs + p * cs];
                any |= LogSpecial(x);
                dst[i] = x;
            }
            for (std::int64_t i = r; i < W; ++i) dst[i] = T(0);
        }
        special[i0 / W] = any;
    }
}

// Whether the task's rows of A or columns of B hold a finite value beyond kLargest.
template <class T>
bool HasLargeInputs(const ProductTask& t) {
    const auto large = [](T x) { return std::fabs(x) > LogConstants<T>::kLargest && std::isfinite(x); };
    const auto* a = static_cast<const T*>(t.a.data);
    const auto* b = static_cast<const T*>(t.b.data);
    for (std::int64_t i = t.row0; i < t.row1; ++i)
        for (std::int64_t p = 0; p < t.k; ++p)
            if (large(a[i * t.a.rs + p * t.a.cs])) return true;
    for (std::int64_t p = 0; p < t.k; ++p)
        for (std::int64_t j = t.col0; j < t.col1; ++j)
            if (large(b[p * t.b.rs + j * t.b.cs])) return true;
    return false;
}

// The scalar path (large inputs; also K = 0): each result as the reference computes it, from its
// largest term, in the wider type.
template <class T>
void LogPlusScalar(const ProductTask& t) {
    using W = typename LogConstants<T>::Wide;
    const auto* a = static_cast<const T*>(t.a.data);
    const auto* b = static_cast<const T*>(t.b.data);
    auto* c = static_cast<T*>(t.c.data);
    for (std::int64_t i = t.row0; i < t.row1; ++i) {
        for (std::int64_t j = t.col0; j < t.col1; ++j) {
            const auto term = [&](std::int64_t p) {
                return T(a[i * t.a.rs + p * t.a.cs] + b[p * t.b.rs + j * t.b.cs]);
            };
            T top = -std::numeric_limits<T>::infinity();
            bool nan = false;
            for (std::int64_t p = 0; p < t.k; ++p) {
                const T x = term(p);
                nan |= std::isnan(x);
                top = x > top ? x : top;
            }
            W v = static_cast<W>(top);
            if (nan) v = std::numeric_limits<W>::quiet_NaN();
            else if (std::isfinite(top)) {
                W sum = 0;
                for (std::int64_t p = 0; p < t.k; ++p) sum += std::exp(static_cast<W>(term(p)) - static_cast<W>(top));
                v += std::log(sum);
            }
            StoreLog<T, W>(v, t.accumulate, c[i * t.c.rs + j * t.c.cs]);
        }
    }
}

// 64-byte-aligned pieces of one scratch allocation.
inline std::size_t LogAligned(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

template <class T>
void RunLogPlus(const ProductTask& t) {
    using Shape = LogTileShape;
    constexpr int MR = Shape::MR, NV = Shape::NV;
    constexpr std::int64_t NR = NV * static_cast<std::int64_t>(kLanes<T>);
    constexpr std::int64_t kNC = std::max<std::int64_t>(kLogNCWanted / NR, 1) * NR;
    static_assert(kLogMC % MR == 0 && kLogKC % kLogSlice == 0, "whole panels and slices in a block");
    using W = typename LogConstants<T>::Wide;
    if (t.row0 >= t.row1 || t.col0 >= t.col1) return;
    if (t.k == 0 || HasLargeInputs<T>(t)) return LogPlusScalar<T>(t);

    const auto* a = static_cast<const T*>(t.a.data);
    const auto* b = static_cast<const T*>(t.b.data);
    auto* c = static_cast<T*>(t.c.data);
    const std::int64_t rows = t.row1 - t.row0, cols = t.col1 - t.col0;
    const std::int64_t mc_max = (std::min(kLogMC, rows) + MR - 1) / MR * MR, kc_max = std::min(kLogKC, t.k);
    const std::int64_t nc_max = std::min(kNC, (cols + NR - 1) / NR * NR);
    const std::size_t a_bytes = LogAligned(static_cast<std::size_t>(mc_max * kc_max) * sizeof(T));
    const std::size_t state_bytes = LogAligned(static_cast<std::size_t>(mc_max * nc_max) * sizeof(T));
    auto* block = static_cast<char*>(scratch(Scratch::PackedA, a_bytes + 2 * state_bytes));
    T* a_pack = reinterpret_cast<T*>(block);
    T* ref = reinterpret_cast<T*>(block + a_bytes);
    T* total = reinterpret_cast<T*>(block + a_bytes + state_bytes);
    T* b_pack = static_cast<T*>(scratch(Scratch::PackedB, static_cast<std::size_t>(kc_max * NR) * sizeof(T)));
    bool a_special[kLogMC / MR];

    for (std::int64_t ic = t.row0; ic < t.row1; ic += kLogMC) {
        const std::int64_t mc = std::min(kLogMC, t.row1 - ic);
        for (std::int64_t jc = t.col0; jc < t.col1; jc += kNC) {
            const std::int64_t nc = std::min(kNC, t.col1 - jc);
            const std::int64_t ss = (nc + NR - 1) / NR * NR;  // the state's row stride
            const std::int64_t padded = (mc + MR - 1) / MR * MR;
            std::fill(ref, ref + padded * ss, std::numeric_limits<T>::lowest());
            std::fill(total, total + padded * ss, T(0));
            for (std::int64_t pc = 0; pc < t.k; pc += kLogKC) {
                const std::int64_t kc = std::min(kLogKC, t.k - pc);
                PackLogPanels<MR>(a + ic * t.a.rs + pc * t.a.cs, t.a.rs, t.a.cs, mc, kc, a_pack, a_special);
                for (std::int64_t j0 = 0; j0 < nc; j0 += NR) {
                    bool b_special = false;
                    PackLogPanels<NR>(b + pc * t.b.rs + (jc + j0) * t.b.cs, t.b.cs, t.b.rs, std::min(NR, nc - j0), kc,
                                      b_pack, &b_special);
                    for (std::int64_t i0 = 0; i0 < mc; i0 += MR) {
                        T* r = ref + i0 * ss + j0;
                        T* s = total + i0 * ss + j0;
                        if (b_special || a_special[i0 / MR])
                            LogTile<T, MR, NV, true>(a_pack + i0 * kc, b_pack, kc, r, s, ss);
                        else LogTile<T, MR, NV, false>(a_pack + i0 * kc, b_pack, kc, r, s, ss);
                    }
                }
            }
            for (std::int64_t i = 0; i < mc; ++i)
                for (std::int64_t j = 0; j < nc; ++j)
                    StoreLog<T, W>(FinishLog<T>(ref[i * ss + j], total[i * ss + j]), t.accumulate,
                                   c[(ic + i) * t.c.rs + (jc + j) * t.c.cs]);
        }
    }
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_LOGPLUS_INL_H_
