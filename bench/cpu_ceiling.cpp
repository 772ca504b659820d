// The register-only loop and the micro-kernel loop of bench/cpu_ceiling.hpp, compiled for every
// SIMD target the kernels are (cpu/simd_targets.h) and dispatched the same way, so that they measure
// the target the kernels run on.
#include <cstdint>

#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu_ceiling.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include <tropical/types.hpp>
#include "cpu/kernel-inl.h"
#include "cpu/ring-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tropical::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using tropical::DType;
using tropical::Semiring;

// Makes the compiler forget what v holds, at no cost: otherwise it would hoist the loop-invariant
// terms out of the loop. Without such an instruction constraint (the portable fallback), nothing.
template <class V>
HWY_INLINE void Opaque(V& v) {
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)
    asm volatile("" : "+v"(v.raw));
#elif HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
    asm volatile("" : "+x"(v.raw));
#elif HWY_ARCH_ARM_A64 && HWY_TARGET == HWY_NEON
    asm volatile("" : "+w"(v.raw));
#else
    (void)v;
#endif
}

// 4 broadcast values by 2 vectors: 8 independent accumulators and 6 operands, which fit the 16
// registers of AVX2 and SSE4 with room for the term (and for i64's compare mask).
template <class R>
std::int64_t Loop(std::int64_t iterations) {
    using T = typename R::Elem;
    const hn::ScalableTag<T> d;
    constexpr int kRows = 4, kVectors = 2;
    hn::Vec<decltype(d)> acc[kRows][kVectors], a[kRows], b[kVectors];
    HWY_UNROLL(4) for (int i = 0; i < kRows; ++i) {
        a[i] = hn::Set(d, static_cast<T>(i));
        Opaque(a[i]);
        HWY_UNROLL(2) for (int j = 0; j < kVectors; ++j) acc[i][j] = hn::Set(d, R::Init());
    }
    HWY_UNROLL(2) for (int j = 0; j < kVectors; ++j) b[j] = hn::Set(d, static_cast<T>(j));
    for (std::int64_t it = 0; it < iterations; ++it) {
        HWY_UNROLL(2) for (int j = 0; j < kVectors; ++j) Opaque(b[j]);
        HWY_UNROLL(4) for (int i = 0; i < kRows; ++i) {
            HWY_UNROLL(2) for (int j = 0; j < kVectors; ++j) {
                // The empty asm statements keep their order, so each term is made and used before the
                // next: without them GCC computed all 8 integer terms first and spilled accumulators.
                acc[i][j] = R::Pick(acc[i][j], R::Times(a[i], b[j]));
            }
        }
    }
    // Every accumulator feeds the result, so that none of the work can be dropped.
    auto all = acc[0][0];
    HWY_UNROLL(4) for (int i = 0; i < kRows; ++i) {
        HWY_UNROLL(2) for (int j = 0; j < kVectors; ++j) all = R::Pick(all, acc[i][j]);
    }
    volatile T sink = hn::GetLane(all);
    (void)sink;
    return iterations * kRows * kVectors * static_cast<std::int64_t>(hn::Lanes(d));
}

// The products' micro-kernel, tile for tile, on packed panels of kc = 256 terms (small values, so
// that no term overflows), its accumulators stored after every call as in a product.
template <class R>
std::int64_t KernelLoop(std::int64_t iterations) {
    namespace cpu = tropical::cpu::HWY_NAMESPACE;
    using T = typename R::Elem;
    using Shape = cpu::Tile<R, false>;
    constexpr int MR = Shape::MR, NV = Shape::NV;
    constexpr std::size_t L = cpu::kLanes<T>, NR = NV * L, kc = 256;
    using D = hn::ScalableTag<T>;
    const D d;
    HWY_ALIGN static T a[kc * MR], b[kc * NR], out[MR * NR];
    for (std::size_t i = 0; i < kc * MR; ++i) a[i] = static_cast<T>(i % 7);
    for (std::size_t i = 0; i < kc * NR; ++i) b[i] = static_cast<T>(i % 5);
    // kc through a volatile: with a constant, GCC clones the kernel for it and spills accumulators,
    // which the products (whose kc varies) never see.
    volatile std::size_t terms = kc;
    for (std::int64_t it = 0; it < iterations; ++it) cpu::ProductTile<R, MR, NV, false>(d, a, b, terms, out);
    volatile T sink = out[0];
    (void)sink;
    return iterations * static_cast<std::int64_t>(kc * MR * NR);
}

template <template <class> class Run, class T>
std::int64_t RunOf(Semiring semiring, std::int64_t iterations) {
    namespace cpu = tropical::cpu::HWY_NAMESPACE;
    switch (semiring) {
    case Semiring::MaxPlus: return Run<cpu::MaxPlusRing<T>>::Go(iterations);
    case Semiring::MinPlus: return Run<cpu::MinPlusRing<T>>::Go(iterations);
    case Semiring::MaxMul: return Run<cpu::MaxMulRing<T>>::Go(iterations);
    case Semiring::MaxMin: return Run<cpu::MaxMinRing<T>>::Go(iterations);
    case Semiring::MinMax: return Run<cpu::MinMaxRing<T>>::Go(iterations);
    case Semiring::Counting: break;  // no SIMD ring: cpu/host_counting.cpp is a plain loop
    case Semiring::OrAnd: break;     // no SIMD ring: booleans run on cpu/orand.cpp's words
    case Semiring::LogPlus: break;   // no ring of this kind: cpu/logplus-inl.h has a loop of its own
    }
    return 0;
}

template <template <class> class Run>
std::int64_t RunOf(DType dtype, Semiring semiring, std::int64_t iterations) {
    switch (dtype) {
    case DType::F32: return RunOf<Run, float>(semiring, iterations);
    case DType::F64: return RunOf<Run, double>(semiring, iterations);
    case DType::I32: return RunOf<Run, std::int32_t>(semiring, iterations);
    case DType::I64: return RunOf<Run, std::int64_t>(semiring, iterations);
    case DType::U8:
    case DType::BF16:
    case DType::F16:
    case DType::I16: break;  // no SIMD ring of their own yet (16-bit: issue 35)
    }
    return 0;
}

template <class R>
struct RegisterRun {
    static std::int64_t Go(std::int64_t iterations) { return Loop<R>(iterations); }
};
template <class R>
struct KernelRun {
    static std::int64_t Go(std::int64_t iterations) { return KernelLoop<R>(iterations); }
};

std::int64_t RegisterLoopTerms(DType dtype, Semiring semiring, std::int64_t iterations) {
    return RunOf<RegisterRun>(dtype, semiring, iterations);
}

std::int64_t MicroKernelTerms(DType dtype, Semiring semiring, std::int64_t iterations) {
    return RunOf<KernelRun>(dtype, semiring, iterations);
}

}  // namespace tropical::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu_ceiling.hpp"

namespace tropical::bench {

HWY_EXPORT(RegisterLoopTerms);
HWY_EXPORT(MicroKernelTerms);

std::int64_t register_loop_terms(DType dtype, Semiring semiring, std::int64_t iterations) {
    return HWY_DYNAMIC_DISPATCH(RegisterLoopTerms)(dtype, semiring, iterations);
}

std::int64_t micro_kernel_terms(DType dtype, Semiring semiring, std::int64_t iterations) {
    return HWY_DYNAMIC_DISPATCH(MicroKernelTerms)(dtype, semiring, iterations);
}

}  // namespace tropical::bench
#endif
