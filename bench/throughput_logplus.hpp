#pragma once
// throughput_bench's rows of the log semiring (LogPlus: products and gradients), registered by
// register_all (bench/throughput_bench.cpp).

namespace tropical::bench {

// LogPlus's rows (logplus/...): Tterms, M*N*K terms per second (one ex2 each), and median_us.
void add_logplus_rows();

}  // namespace tropical::bench
