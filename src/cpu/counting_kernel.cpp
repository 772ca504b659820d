// The counting semiring's CPU kernels, compiled once per SIMD target by Highway's foreach_target.h
// (the targets of cpu/simd_targets.h, as for the other semirings) and chosen at run time for this
// CPU, so that cpu::force_target() steers them too. A task is a band of rows of one product's C.
//
// Each result is a (value, count) pair; the vectors run along the columns j of C, a lane per
// result, and a register tile holds MR rows by NV vectors of pairs across a block of K:
//
//   for each MC rows of the band, NC columns:    the tiles' pairs wait in scratch between blocks
//     for each KC terms:                         A's block packed as [k][row] panels of MR rows
//       for each NR = NV vectors of columns:     B's panel packed as [k][column], NR a term
//         for each MR rows:
//           the tile's pairs over the KC terms
//     then every pair finished into C (scalar: the -inf, NaN and -0 rules, accumulate)
//
// B is packed whatever its layout: a row-major B read in place was 15 to 30% slower on an AVX-512
// machine (its rows 4 or 8 KiB apart, for n = 1024, share few L1 sets), and the copy is read by
// MC / MR tiles. Counts are double, so the lanes are double: f32 values are added as f32 (a vector
// of half width with as many lanes) and widened to double, which is exact, as is the narrowing at
// the end; the compares and selects are on doubles. A step is the scalar loop's (and
// kernels/counting.cuh's) with the same roundings: the term's value a + b in T, its count ca * cb
// then + the kept count as two roundings (this file is compiled with -ffp-contract=off, so that no
// FMA fuses them: counts past 2^53 would round differently), and every result takes its terms in
// increasing k. Panels that cannot make a NaN term (no NaN, no +inf) take a kernel without the NaN
// test, as the other semirings' do.
#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/counting_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu/counting.hpp"
#include "cpu/kernel-inl.h"
#include "cpu/workspace.hpp"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The register tile: MR x NV pairs take 2 MR NV registers; the rest hold the broadcast A value and
// count and a step's temporaries (term, product, two masks, a sum). 32 registers: 4 x 3; 16: 2 x 2.
struct CountingTileShape {
    static constexpr int MR = kRegisters >= 32 ? 4 : 2;
    static constexpr int NV = kRegisters >= 32 ? 3 : 2;
};

// Blocks: a B panel of KC terms (NR counts and NR values a term: 36 to 48 KiB with AVX-512, half
// that with AVX2) about fills L1 (KC = 256 was no faster, within the noise of a busy machine); the
// MC x NC pairs (16 bytes each) and A's MC x KC block stay in L2.
inline constexpr std::int64_t kKC = 128, kMC = 64, kNCWanted = 256;

inline constexpr std::int64_t kLanesF64 = HWY_LANES(double);

// A vector of T with D's lane count, widened to D's doubles (exact).
template <class D, class V>
HWY_INLINE hn::Vec<D> Widen(D d, V v) {
    if constexpr (std::is_same_v<hn::TFromV<V>, double>) {
        (void)d;
        return v;
    } else {
        return hn::PromoteTo(d, v);
    }
}

// One term into a pair, lane by lane, as the scalar loop does it: with
//   best = term > value || isnan(term) ? term : value,   base = value == best ? count : 0,
//   count = term == best ? ca * cb + base : count,        value = best,
// which is, without `best`: where term >= value (neither NaN), count = ca * cb + (term == value ?
// count : 0), else count stays; value = term where term >= value or term is NaN. (Where they tie
// the value is replaced by an equal one: only -0 against +0 differ, and the finish adds +0.)
// Without NaN terms (kNaN false) the NaN test is left out (a NaN value, from an earlier block of
// K, still stays: no term is >= it).
template <bool kNaN, class D, class V = hn::Vec<D>>
HWY_INLINE void Step(D, V term, V product, V& value, V& count) {
    const auto ge = hn::Ge(term, value);
    const auto tie = hn::Eq(term, value);
    count = hn::IfThenElse(ge, hn::Add(product, hn::IfThenElseZero(tie, count)), count);
    if constexpr (kNaN) value = hn::IfThenElse(hn::Or(ge, hn::IsNaN(term)), term, value);
    else value = hn::IfThenElse(ge, term, value);
}

// A value that may make a NaN term: NaN, or +inf, which meets a -inf of the other operand in one.
template <class T>
HWY_INLINE bool Unsafe(T x) {
    return !(x < std::numeric_limits<T>::infinity());
}

// MR rows by NV vectors of pairs over kc terms: A's panels hold MR values and MR counts a term, B's
// NV vectors of values (T) and NV of counts a term. The pairs (doubles) are read from and written
// back to `value` and `count`, rows `ss` apart. kNaN: a term may be NaN.
template <class T, int MR, int NV, bool kNaN>
HWY_NOINLINE void CountingTile(const T* HWY_RESTRICT a, const double* HWY_RESTRICT ac, const T* HWY_RESTRICT b,
                               const double* HWY_RESTRICT bc, std::int64_t kc, double* HWY_RESTRICT value,
                               double* HWY_RESTRICT count, std::int64_t ss) {
    using D = hn::ScalableTag<double>;
    const D d;
    const hn::Rebind<T, D> dv;
    constexpr std::int64_t L = kLanesF64;
    hn::Vec<D> v[MR][NV], c[MR][NV];
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            v[i][j] = hn::Load(d, value + i * ss + j * L);
            c[i][j] = hn::Load(d, count + i * ss + j * L);
        }
    }
    for (std::int64_t p = 0; p < kc; ++p, a += MR, ac += MR, b += NV * L, bc += NV * L) {
        HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
            const auto av = hn::Set(dv, a[i]);
            const auto ca = hn::Set(d, ac[i]);
            HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
                const auto term = Widen(d, hn::Add(av, hn::Load(dv, b + j * L)));
                Step<kNaN>(d, term, hn::Mul(ca, hn::Load(d, bc + j * L)), v[i][j], c[i][j]);
            }
        }
    }
    HWY_UNROLL(16) for (int i = 0; i < MR; ++i) {
        HWY_UNROLL(16) for (int j = 0; j < NV; ++j) {
            hn::Store(v[i][j], d, value + i * ss + j * L);
            hn::Store(c[i][j], d, count + i * ss + j * L);
        }
    }
}

// The tile for `rows` (1 to MR) rows: a band's last rows take a smaller tile rather than padding.
template <class T, int MR, int NV>
HWY_INLINE void CountingTileRows(std::int64_t rows, bool nan, const T* a, const double* ac, const T* b,
                                 const double* bc, std::int64_t kc, double* value, double* count, std::int64_t ss) {
    if constexpr (MR > 1) {
        if (rows < MR) return CountingTileRows<T, MR - 1, NV>(rows, nan, a, ac, b, bc, kc, value, count, ss);
    }
    if (nan) CountingTile<T, MR, NV, true>(a, ac, b, bc, kc, value, count, ss);
    else CountingTile<T, MR, NV, false>(a, ac, b, bc, kc, value, count, ss);
}

// Rows [0, rows) and terms [0, kc) of an operand (element (i, p) at src[i * rs + p * cs]) as
// panels of `mr` rows, each [p][row] (the last may have fewer rows). Where `unsafe` is given,
// unsafe[q] says whether panel q holds an unsafe value.
template <class T>
void PackRows(const T* src, std::int64_t rs, std::int64_t cs, std::int64_t rows, std::int64_t kc, std::int64_t mr,
              T* dst, bool* unsafe = nullptr) {
    for (std::int64_t i0 = 0; i0 < rows; i0 += mr) {
        const std::int64_t r = std::min(mr, rows - i0);
        bool any = false;
        for (std::int64_t p = 0; p < kc; ++p) {
            for (std::int64_t i = 0; i < r; ++i) {
                const T x = src[(i0 + i) * rs + p * cs];
                if (unsafe) any |= Unsafe(x);
                *dst++ = x;
            }
        }
        if (unsafe) unsafe[i0 / mr] = any;
    }
}

// A panel of B: terms [0, kc) of columns [0, cols) (element (p, j) at src[p * rs + j * cs]) copied
// to `dst` as rows of nr contiguous elements, padded with zeros (lanes that are computed but never
// stored). Returns whether the panel holds an unsafe value, where `check` asks.
template <class T>
bool PackPanelOfB(const T* src, std::int64_t rs, std::int64_t cs, std::int64_t cols, std::int64_t kc, std::int64_t nr,
                  T* dst, bool check) {
    bool any = false;
    for (std::int64_t p = 0; p < kc; ++p, dst += nr) {
        for (std::int64_t j = 0; j < cols; ++j) {
            const T x = src[p * rs + j * cs];
            if (check) any |= Unsafe(x);
            dst[j] = x;
        }
        for (std::int64_t j = cols; j < nr; ++j) dst[j] = T(0);
    }
    return any;
}

// The rules of a finished pair (src/reference/reference.hpp): -inf counts 0, NaN has count NaN, -0 is +0.
template <class T>
void FinishPair(T& value, double& count) {
    if (std::isnan(value)) count = std::numeric_limits<double>::quiet_NaN();
    else if (value == -std::numeric_limits<T>::infinity()) count = 0.0;
    value = value + T(0);
}

// A finished pair into C: written, or with accumulate combined with C's (finished) old pair.
template <class T>
void StorePair(T v, double c, bool accumulate, T& out_v, double& out_c) {
    FinishPair(v, c);
    if (accumulate) {
        T old_v = out_v;
        double old_c = out_c;
        FinishPair(old_v, old_c);
        const T best = std::isnan(old_v) || old_v > v ? old_v : v;
        c = (old_v == best ? old_c : 0.0) + (v == best ? c : 0.0);
        v = best;
        FinishPair(v, c);
    }
    out_v = v;
    out_c = c;
}

// 64-byte-aligned pieces of one scratch allocation.
inline std::size_t Aligned(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

template <class T>
void RunCountingRows(const CountingTask& t) {
    using Shape = CountingTileShape;
    constexpr int MR = Shape::MR, NV = Shape::NV;
    constexpr std::int64_t NR = NV * kLanesF64;
    constexpr std::int64_t kNC = std::max<std::int64_t>(kNCWanted / NR, 1) * NR;
    static_assert(kMC % MR == 0, "A's block is whole panels but at the band's end");
    const std::int64_t rows = t.row1 - t.row0;
    if (rows <= 0 || t.n <= 0) return;

    const auto* a = static_cast<const T*>(t.a_values.data);
    const auto* ac = static_cast<const double*>(t.a_counts.data);
    const auto* b = static_cast<const T*>(t.b_values.data);
    const auto* bc = static_cast<const double*>(t.b_counts.data);
    auto* c = static_cast<T*>(t.c_values.data);
    auto* cc = static_cast<double*>(t.c_counts.data);

    // Scratch for what this task needs: A's block and the pairs (one allocation), B's panel (another).
    const std::int64_t mc_max = std::min(kMC, rows), kc_max = std::min(kKC, t.k);
    const std::int64_t nc_max = std::min(kNC, (t.n + NR - 1) / NR * NR);
    const std::size_t a_values_bytes = Aligned(static_cast<std::size_t>(mc_max * kc_max) * sizeof(T));
    const std::size_t a_counts_bytes = Aligned(static_cast<std::size_t>(mc_max * kc_max) * sizeof(double));
    const std::size_t pairs_bytes = Aligned(static_cast<std::size_t>(mc_max * nc_max) * sizeof(double));
    auto* block = static_cast<char*>(scratch(Scratch::PackedA, a_values_bytes + a_counts_bytes + 2 * pairs_bytes));
    T* a_pack = reinterpret_cast<T*>(block);
    double* ac_pack = reinterpret_cast<double*>(block + a_values_bytes);
    double* pair_values = reinterpret_cast<double*>(block + a_values_bytes + a_counts_bytes);
    double* pair_counts = reinterpret_cast<double*>(block + a_values_bytes + a_counts_bytes + pairs_bytes);
    bool a_unsafe[kMC / MR];  // per panel of A's block
    const std::size_t b_values_bytes = Aligned(static_cast<std::size_t>(kc_max * NR) * sizeof(T));
    auto* panel = static_cast<char*>(
        scratch(Scratch::PackedB, b_values_bytes + Aligned(static_cast<std::size_t>(kc_max * NR) * sizeof(double))));
    T* b_pack = reinterpret_cast<T*>(panel);
    double* bc_pack = reinterpret_cast<double*>(panel + b_values_bytes);

    for (std::int64_t ic = t.row0; ic < t.row1; ic += kMC) {
        const std::int64_t mc = std::min(kMC, t.row1 - ic);
        for (std::int64_t jc = 0; jc < t.n; jc += kNC) {
            const std::int64_t nc = std::min(kNC, t.n - jc);
            const std::int64_t ss = (nc + NR - 1) / NR * NR;  // the pairs' row stride
            std::fill(pair_values, pair_values + mc * ss, -std::numeric_limits<double>::infinity());
            std::fill(pair_counts, pair_counts + mc * ss, 0.0);
            for (std::int64_t pc = 0; pc < t.k; pc += kKC) {
                const std::int64_t kc = std::min(kKC, t.k - pc);
                PackRows(a + ic * t.a_values.rs + pc * t.a_values.cs, t.a_values.rs, t.a_values.cs, mc, kc, MR, a_pack,
                         a_unsafe);
                PackRows(ac + ic * t.a_counts.rs + pc * t.a_counts.cs, t.a_counts.rs, t.a_counts.cs, mc, kc, MR,
                         ac_pack);
                for (std::int64_t j0 = 0; j0 < nc; j0 += NR) {
                    const std::int64_t cols = std::min(NR, nc - j0);
                    const bool b_unsafe = PackPanelOfB(b + pc * t.b_values.rs + (jc + j0) * t.b_values.cs,
                                                       t.b_values.rs, t.b_values.cs, cols, kc, NR, b_pack, true);
                    PackPanelOfB(bc + pc * t.b_counts.rs + (jc + j0) * t.b_counts.cs, t.b_counts.rs, t.b_counts.cs,
                                 cols, kc, NR, bc_pack, false);
                    for (std::int64_t i0 = 0; i0 < mc; i0 += MR) {
                        CountingTileRows<T, MR, NV>(std::min<std::int64_t>(MR, mc - i0), b_unsafe || a_unsafe[i0 / MR],
                                                    a_pack + i0 * kc, ac_pack + i0 * kc, b_pack, bc_pack, kc,
                                                    pair_values + i0 * ss + j0, pair_counts + i0 * ss + j0, ss);
                    }
                }
            }
            for (std::int64_t i = 0; i < mc; ++i) {
                for (std::int64_t j = 0; j < nc; ++j) {
                    const std::int64_t row = ic + i, col = jc + j;
                    StorePair(static_cast<T>(pair_values[i * ss + j]), pair_counts[i * ss + j], t.accumulate,
                              c[row * t.c_values.rs + col * t.c_values.cs],
                              cc[row * t.c_counts.rs + col * t.c_counts.cs]);
                }
            }
        }
    }
}

void CountingRows(const CountingTask& t) {
    if (t.dtype == DType::F32) RunCountingRows<float>(t);
    else RunCountingRows<double>(t);
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tropical::cpu {

HWY_EXPORT(CountingRows);

void counting_rows(const CountingTask& task) { HWY_DYNAMIC_DISPATCH(CountingRows)(task); }

}  // namespace tropical::cpu
#endif
