"""Host time per call of a Python callable, shared by the benchmarks that time calls from Python
(host_costs.py, call_latency.py). Needs nothing but the standard library."""

from __future__ import annotations

import statistics
import time


def per_call(fn, calls: int = 20000, loops: int = 7) -> float:
    """Median over `loops` of the host time per call of `calls` calls of fn (after 200 untimed ones),
    in microseconds."""
    for _ in range(200):
        fn()
    samples = []
    for _ in range(loops):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)
