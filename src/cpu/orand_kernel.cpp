// OrAnd's kernels, compiled once per SIMD target by Highway's foreach_target.h (the set of
// cpu/simd_targets.h) and chosen at run time for this CPU, like the other semirings' products
// (cpu/product_f32.cpp): cpu::force_target() steers them too.
//
// A row of C is the OR of the rows of B that A's row selects: C[i, :] = OR over the k with
// A[i, k] of B[k, :], on bits (B's rows packed along N), so one vector OR does 64 results a lane.
// The k come from A's row packed along K, lowest first; the row's running OR is done as soon as
// every bit of it is set (the bits past N start set), which ends dense rows after a few k, while a
// sparse row costs only its few true k. With the argmax, the bits a k sets first (B's row AND NOT
// the running OR) are that k's.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/orand_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "cpu/orand_kernel.hpp"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether the bytes' masks can go to and from memory as bits, a vector at a time (not on the
// one-lane scalar target, whose masks are less than a byte).
constexpr bool kMaskBytes = HWY_TARGET != HWY_SCALAR;

void OrAndPackBytes(const std::uint8_t* HWY_RESTRICT bytes, std::int64_t count, std::uint64_t* HWY_RESTRICT out) {
    const hn::ScalableTag<std::uint8_t> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    auto* const bits = reinterpret_cast<std::uint8_t*>(out);  // little-endian: bit t of byte e is bit 8 e + t
    std::int64_t t = 0;
    const std::int64_t words = (count + 63) / 64;
    if constexpr (kMaskBytes) {
        for (; t + lanes <= count; t += lanes)
            hn::StoreMaskBits(d, hn::Ne(hn::LoadU(d, bytes + t), hn::Zero(d)), bits + t / 8);
        if (t < count) {
            // The last bytes through a vector of zeros (lines shorter than a vector are common in
            // batches of small matrices); its mask bits end inside the last word.
            HWY_ALIGN std::uint8_t tail[hn::MaxLanes(d)] = {};
            std::memcpy(tail, bytes + t, static_cast<std::size_t>(count - t));
            for (std::int64_t e = t / 8; e < 8 * words; ++e) bits[e] = 0;
            hn::StoreMaskBits(d, hn::Ne(hn::Load(d, tail), hn::Zero(d)), bits + t / 8);
        }
        return;
    }
    for (std::int64_t w = 0; w < words; ++w) {  // a word in a register at a time
        const std::int64_t first = 64 * w, last = std::min(count, first + 64);
        std::uint64_t word = 0;
        for (std::int64_t e = first; e < last; ++e) word |= std::uint64_t{bytes[e] != 0} << (e - first);
        out[w] = word;
    }
}

// The set bits of `fresh` (a vector of a row's words, the first from column j0) are results that k
// is the first to make true: their argmax. Where the indices are contiguous and a vector of them
// takes whole bytes of mask bits, k goes to them by masked stores, a vector of indices each (no
// branch on the bits: on sparse and dense rows alike that was 1.2 to 1.5 times as fast as the
// loop below, whose branches mostly mispredict); elsewhere the nonzero words' bits one by one.
template <class D>
HWY_NOINLINE void RecordFirst(D d, hn::Vec<D> fresh, std::int64_t k, std::int64_t j0, const OrAndRows& t,
                              std::int32_t* HWY_RESTRICT idx_row) {
    HWY_ALIGN std::uint64_t words[hn::MaxLanes(d)];
    hn::Store(fresh, d, words);
    const hn::ScalableTag<std::int32_t> d32;
    if constexpr (kMaskBytes && hn::MaxLanes(d32) >= 8) {
        if (t.idx_cs == 1) {
            const auto* const mask_bytes = reinterpret_cast<const std::uint8_t*>(words);
            const auto value = hn::Set(d32, static_cast<std::int32_t>(k));
            const auto lanes = static_cast<std::int64_t>(hn::Lanes(d32));
            // The fresh bits end before N; no store reaches past it.
            const std::int64_t end = std::min(64 * static_cast<std::int64_t>(hn::Lanes(d)), t.n - j0);
            std::int64_t g = 0;
            for (; g + lanes <= end; g += lanes)
                hn::BlendedStore(value, hn::LoadMaskBits(d32, mask_bytes + g / 8), d32, idx_row + j0 + g);
            for (; g < end; ++g)
                if ((words[g / 64] >> (g % 64) & 1) != 0) idx_row[j0 + g] = static_cast<std::int32_t>(k);
            return;
        }
    }
    std::uint8_t nonzero[8] = {};
    hn::StoreMaskBits(d, hn::Ne(fresh, hn::Zero(d)), nonzero);
    for (unsigned lanes = nonzero[0]; lanes != 0; lanes &= lanes - 1) {
        const int l = std::countr_zero(lanes);
        for (std::uint64_t w = words[l]; w != 0; w &= w - 1) {
            const std::int64_t j = j0 + 64 * l + std::countr_zero(w);
            idx_row[j * t.idx_cs] = static_cast<std::int32_t>(k);
        }
    }
}

// C's row i from the running OR `acc` of the block's columns [j0, j1).
void StoreRow(const OrAndRows& t, std::int64_t i, const std::uint64_t* HWY_RESTRICT acc, std::int64_t j0,
              std::int64_t j1) {
    std::uint8_t* const row = t.c + i * t.c_rs;
    const auto* const bits = reinterpret_cast<const std::uint8_t*>(acc);
    std::int64_t j = j0;
    if constexpr (kMaskBytes) {
        if (t.c_cs == 1) {
            const hn::ScalableTag<std::uint8_t> d;
            const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
            const auto one = hn::Set(d, 1), zero = hn::Zero(d);
            for (; j + lanes <= j1; j += lanes) {
                auto found = hn::LoadMaskBits(d, bits + (j - j0) / 8);
                if (t.accumulate) found = hn::Or(found, hn::Ne(hn::LoadU(d, row + j), zero));
                hn::StoreU(hn::IfThenElseZero(found, one), d, row + j);
            }
            if (j < j1) {  // the last results through a vector in memory of its own
                HWY_ALIGN std::uint8_t tail[hn::MaxLanes(d)] = {};
                const auto count = static_cast<std::size_t>(j1 - j);
                std::memcpy(tail, row + j, count);
                auto found = hn::LoadMaskBits(d, bits + (j - j0) / 8);
                if (t.accumulate) found = hn::Or(found, hn::Ne(hn::Load(d, tail), zero));
                hn::Store(hn::IfThenElseZero(found, one), d, tail);
                std::memcpy(row + j, tail, count);
                return;
            }
        }
    }
    for (; j < j1; ++j) {
        std::uint8_t& out = row[j * t.c_cs];
        const bool found = (acc[(j - j0) / 64] >> ((j - j0) % 64) & 1) != 0;
        out = found || (t.accumulate && out != 0) ? 1 : 0;
    }
}

// Words [v, v + NV lanes) of row i's running OR (`acc`, which holds the bits past N set), over
// the true k of A's row, in registers: each k ORs in its row of B, until every bit is set.
template <int NV, class D>
HWY_INLINE void RowChunk(D d, const OrAndRows& t, const std::uint64_t* HWY_RESTRICT a_row, std::int64_t v,
                         std::uint64_t* HWY_RESTRICT acc, std::int64_t j0, std::int32_t* HWY_RESTRICT idx_row) {
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto ones = hn::Set(d, ~std::uint64_t{0}), zero = hn::Zero(d);
    hn::Vec<D> x[NV];
    auto all = ones;
    for (int c = 0; c < NV; ++c) {
        x[c] = hn::Load(d, acc + c * lanes);
        all = hn::And(all, x[c]);
    }
    if (hn::AllTrue(d, hn::Eq(all, ones))) return;  // past N (the scalar target's 1-word chunks)
    for (std::int64_t w = 0; w < t.a_words; ++w) {
        for (std::uint64_t ks = a_row[w]; ks != 0; ks &= ks - 1) {
            const std::int64_t k = 64 * w + std::countr_zero(ks);
            const std::uint64_t* HWY_RESTRICT const b_row = t.b + k * t.b_words + v;
            all = ones;
            for (int c = 0; c < NV; ++c) {
                const auto row = hn::LoadU(d, b_row + c * lanes);
                if (idx_row) {
                    const auto fresh = hn::AndNot(x[c], row);
                    if (!hn::AllTrue(d, hn::Eq(fresh, zero))) RecordFirst(d, fresh, k, j0 + 64 * c * lanes, t, idx_row);
                }
                x[c] = hn::Or(x[c], row);
                all = hn::And(all, x[c]);
            }
            if (hn::AllTrue(d, hn::Eq(all, ones))) {
                w = t.a_words;  // every result of the chunk is found
                break;
            }
        }
    }
    for (int c = 0; c < NV; ++c) hn::Store(x[c], d, acc + c * lanes);
}

void OrAndRowsImpl(const OrAndRows& t) {
    const hn::ScalableTag<std::uint64_t> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    constexpr int kChunk = 4;  // vectors of a row's running OR held in registers
    HWY_ALIGN std::uint64_t acc[kOrAndMaxBlockWords];
    const std::int64_t n_words = (t.n + 63) / 64;
    for (std::int64_t v0 = 0; v0 < n_words; v0 += t.block_words) {
        const std::int64_t width = std::min(t.block_words, t.b_words - v0);
        const std::int64_t j0 = 64 * v0, j1 = std::min(t.n, 64 * (v0 + width));
        for (std::int64_t i = t.row0; i < t.row1; ++i) {
            // The bits past N start set: they never count as found, and a chunk is done when all are.
            for (std::int64_t v = 0; v < width; ++v) {
                const std::int64_t left = t.n - 64 * (v0 + v);
                acc[v] = left >= 64 ? 0 : left <= 0 ? ~std::uint64_t{0} : ~std::uint64_t{0} << left;
            }
            std::int32_t* const idx_row = t.idx ? t.idx + i * t.idx_rs : nullptr;
            if (idx_row && t.idx_cs == 1) std::fill(idx_row + j0, idx_row + j1, -1);
            else if (idx_row)
                for (std::int64_t j = j0; j < j1; ++j) idx_row[j * t.idx_cs] = -1;
            const std::uint64_t* const a_row = t.a + i * t.a_words;
            for (std::int64_t v = 0; v < width; v += kChunk * lanes) {
                const std::int64_t vectors = std::min<std::int64_t>(kChunk, (width - v) / lanes);
                const std::int64_t j = j0 + 64 * v;
                switch (vectors) {
                case 4: RowChunk<4>(d, t, a_row, v0 + v, acc + v, j, idx_row); break;
                case 3: RowChunk<3>(d, t, a_row, v0 + v, acc + v, j, idx_row); break;
                case 2: RowChunk<2>(d, t, a_row, v0 + v, acc + v, j, idx_row); break;
                default: RowChunk<1>(d, t, a_row, v0 + v, acc + v, j, idx_row); break;
                }
            }
            StoreRow(t, i, acc, j0, j1);
        }
    }
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tropical::cpu {

HWY_EXPORT(OrAndRowsImpl);
HWY_EXPORT(OrAndPackBytes);

void orand_rows(const OrAndRows& task) { HWY_DYNAMIC_DISPATCH(OrAndRowsImpl)(task); }
void orand_pack_bytes(const std::uint8_t* bytes, std::int64_t count, std::uint64_t* out) {
    HWY_DYNAMIC_DISPATCH(OrAndPackBytes)(bytes, count, out);
}

}  // namespace tropical::cpu
#endif
