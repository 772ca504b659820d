// Packing for the CPU kernels, once per SIMD target (see cpu/ring-inl.h): a block of an operand is
// copied into micro-panels in the order the micro-kernel reads them, through the ring's Stage(),
// whatever the operand's layout. A is packed by rows (MR per panel), B by columns (NR per panel,
// which is the same routine on B's transpose).
#if defined(TROPICAL_CPU_PACK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TROPICAL_CPU_PACK_INL_H_
#undef TROPICAL_CPU_PACK_INL_H_
#else
#define TROPICAL_CPU_PACK_INL_H_
#endif

#include <cstdint>

#include <hwy/highway.h>

#include "cpu/ring-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {

// One micro-panel: for p in [0, kc), the W values src[i * rs + p * cs] for i in [0, rows) (rows <= W),
// then Stage(Zero()) up to W (padding the kernel computes with but nobody stores). Returns whether
// a value is unsafe (may make a NaN term).
template <class R, int W, class T>
HWY_INLINE bool PackPanel(const T* HWY_RESTRICT src, std::int64_t rs, std::int64_t cs, std::int64_t rows,
                          std::int64_t kc, T* HWY_RESTRICT dst) {
    bool unsafe = false;
    if (rows == W && rs == 1) {
        // The W values of each p are contiguous (A column-major, B row-major): a straight copy.
        for (std::int64_t p = 0; p < kc; ++p, src += cs, dst += W) {
            HWY_UNROLL(16) for (int i = 0; i < W; ++i) {
                const T x = src[i];
                if constexpr (R::kMayNaN) unsafe |= R::Unsafe(x);
                dst[i] = R::Stage(x);
            }
        }
        return unsafe;
    }
    if (rows == W) {
        for (std::int64_t p = 0; p < kc; ++p, src += cs, dst += W) {
            HWY_UNROLL(16) for (int i = 0; i < W; ++i) {
                const T x = src[i * rs];
                if constexpr (R::kMayNaN) unsafe |= R::Unsafe(x);
                dst[i] = R::Stage(x);
            }
        }
        return unsafe;
    }
    const T pad = R::Stage(R::Zero());
    for (std::int64_t p = 0; p < kc; ++p, src += cs, dst += W) {
        for (std::int64_t i = 0; i < rows; ++i) {
            const T x = src[i * rs];
            if constexpr (R::kMayNaN) unsafe |= R::Unsafe(x);
            dst[i] = R::Stage(x);
        }
        for (std::int64_t i = rows; i < W; ++i) dst[i] = pad;
    }
    return unsafe;
}

// Rows [0, rows) of a block (element (i, p) at src + i * rs + p * cs, p in [0, kc)) into
// ceil(rows / W) micro-panels of W * kc values each; unsafe[q] says whether panel q holds an unsafe
// value.
template <class R, int W, class T>
void PackBlock(const T* src, std::int64_t rs, std::int64_t cs, std::int64_t rows, std::int64_t kc, T* dst,
               bool* unsafe) {
    for (std::int64_t q = 0; q * W < rows; ++q) {
        const std::int64_t r = rows - q * W < W ? rows - q * W : W;
        unsafe[q] = PackPanel<R, W>(src + q * W * rs, rs, cs, r, kc, dst + q * W * kc);
    }
}

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TROPICAL_CPU_PACK_INL_H_
