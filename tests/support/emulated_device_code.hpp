#pragma once
// The device code of kernels/ as support/device_emulation.hpp runs it on the CPU, for the emulated
// tests (orand_emulation_test, and through support/emulated_products.hpp vector_emulation_test,
// column_emulation_test and dense_emulation_test): CMakeLists.txt's device_code_pieces in order, but
// for backward.cuh, whose `extern __shared__` has no host twin (its one name that entry.cuh uses is
// declared instead), and the counting loop, which no emulated test runs (entry.cuh names it only in a
// template that is then never instantiated). Include it after every
// other header, so that the emulation's macros reach nothing else; it takes them back at the end.
#include "support/device_emulation.hpp"
// clang-format off
#include "kernel_params.h"
#include "semiring.cuh"
#include "staging.cuh"
#include "packed16.cuh"
#include "packed16_loop.cuh"
#include "argmax_rescan.cuh"
#include "register_tile.cuh"
#include "main_loop.cuh"
#include "small.cuh"
#include "vector.cuh"
#include "column.cuh"
#include "dense.cuh"
#include "wide.cuh"
namespace tg { template <class T, bool GRAD_A> void backward(const TgBackwardParams& p); }
#include "logplus.cuh"
#include "logplus_backward.cuh"
#include "logplus_factored.cuh"
#include "logplus_factored_backward.cuh"
#include "orand_staging.cuh"
#include "orand.cuh"
#include "backtrack.cuh"
#include "entry.cuh"
// clang-format on
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef __shared__
#undef __align__
