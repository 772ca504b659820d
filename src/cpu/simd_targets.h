// Included first by every file of the CPU path that compiles SIMD code through Highway's
// foreach_target.h, so that all of them build the same set of targets: on x86 AVX-512 (AVX3), AVX2,
// SSE4 and Highway's portable fallback; on ARM NEON. SSSE3 is left out (SSE4 covers every x86 CPU
// that has it but a few from before 2008, which take the fallback), and so are SVE and RISC-V's
// vectors, whose sizeless vectors the register tiles (arrays of vectors) cannot hold.
#ifndef TROPICAL_CPU_SIMD_TARGETS_H_
#define TROPICAL_CPU_SIMD_TARGETS_H_

#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | HWY_RVV)
#endif

#endif  // TROPICAL_CPU_SIMD_TARGETS_H_
