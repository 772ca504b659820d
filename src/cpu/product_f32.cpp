// The CPU product kernels for float elements, compiled once per SIMD target by Highway's
// foreach_target.h (AVX-512, AVX2, SSE4 and a portable fallback on x86; NEON on ARM) and chosen at
// run time for this CPU. The code is in cpu/product-inl.h; this file only instantiates it.
#include <cstdint>

#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/product_f32.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "cpu/product-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {

void ProductF32(const ProductTask& task) { RunProduct<float>(task); }
TileShape TileF32(Semiring semiring, bool argmax) { return TileFor<float>(semiring, argmax); }

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tropical::cpu {

HWY_EXPORT(ProductF32);
HWY_EXPORT(TileF32);

void product_f32(const ProductTask& task) { HWY_DYNAMIC_DISPATCH(ProductF32)(task); }
TileShape tile_f32(Semiring semiring, bool argmax) { return HWY_DYNAMIC_DISPATCH(TileF32)(semiring, argmax); }

}  // namespace tropical::cpu
#endif
