// The CPU product kernels for std::int64_t elements, compiled once per SIMD target by Highway's
// foreach_target.h (AVX-512, AVX2, SSE4 and a portable fallback on x86; NEON on ARM) and chosen at
// run time for this CPU. The code is in cpu/product-inl.h; this file only instantiates it.
#include <cstdint>

#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/product_i64.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "cpu/product-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {

void ProductI64(const ProductTask& task) { RunProduct<std::int64_t>(task); }
TileShape TileI64(Semiring semiring, bool argmax) { return TileFor<std::int64_t>(semiring, argmax); }

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tropical::cpu {

HWY_EXPORT(ProductI64);
HWY_EXPORT(TileI64);

void product_i64(const ProductTask& task) { HWY_DYNAMIC_DISPATCH(ProductI64)(task); }
TileShape tile_i64(Semiring semiring, bool argmax) { return HWY_DYNAMIC_DISPATCH(TileI64)(semiring, argmax); }

}  // namespace tropical::cpu
#endif
