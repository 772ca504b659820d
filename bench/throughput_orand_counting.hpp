#pragma once
// throughput_bench's rows of the semirings with products of their own: OrAnd (bytes, packed words and
// the packing) and CountingTropical ((value, count) pairs). Registered in the suite's order by
// register_all (bench/throughput_bench.cpp).
#include "support/limits.hpp"

namespace tropical::bench {

// OrAnd's rows (orand/...): Tterms, M*N*K per product over the median time, against `limits`' u8
// (read when a row runs); the packing's GB/s against its hbm.
void add_orand_rows(const Limits& limits);

// CountingTropical's rows (counting/..., counting_batched/...): Tterms.
void add_counting_rows();

}  // namespace tropical::bench
