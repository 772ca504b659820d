#pragma once
// Cases of the counting semiring for every path (reference, host, C ABI, GPU): random (value, count)
// operands with many ties (small integer values, so that equal maxima are common and their counts
// add), edge values (-inf, +inf, NaN) where asked, each of the six matrices with its own layout and
// padding, batches with broadcast inputs; the expected result from the reference, batch by batch.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "reference/reference.hpp"
#include "support/host_matrix.hpp"
#include "support/random_inputs.hpp"

namespace tropical::testing {

// A counting operand: values and counts of one shape, each stored its own way.
template <class T>
struct CountingMatrix {
    HostMatrix<T> values;
    HostMatrix<double> counts;
};

struct CountingShape {
    std::int64_t m, n, k, batch = 1;
};

// Where each of the six matrices lives: `combination` (0..63) picks a layout per matrix, `salt`
// the paddings; `broadcast` gives A's values and B's counts a batch stride of 0.
struct CountingGeometry {
    Geometry av, ac, bv, bc, cv, cc;
};

inline CountingGeometry counting_geometry(int combination, int salt, std::int64_t batch, bool broadcast) {
    CountingGeometry g;
    Geometry* all[] = {&g.av, &g.ac, &g.bv, &g.bc, &g.cv, &g.cc};
    for (int i = 0; i < 6; ++i) {
        all[i]->layout = (combination >> i) & 1 ? Layout::ColMajor : Layout::RowMajor;
        all[i]->pad = (salt + 3 * i) % 3;
        all[i]->count = batch;
        all[i]->gap = (salt + i) % 2;
    }
    g.av.broadcast = broadcast;
    g.bc.broadcast = broadcast;
    return g;
}

// Values: integers in [-2, 2] (ties everywhere); with `edges`, also -inf (1 in 8), +inf (1 in 40)
// and NaN (1 in 80). Counts: integers 0..3, so that products and sums stay exact.
template <class T>
CountingMatrix<T> random_counting(Rng& rng, std::int64_t rows, std::int64_t cols, const Geometry& gv,
                                  const Geometry& gc, bool edges) {
    CountingMatrix<T> m{make_matrix<T>(rows, cols, gv), make_matrix<double>(rows, cols, gc)};
    using L = std::numeric_limits<T>;
    m.values.fill([&]() -> T {
        if (edges) {
            const std::int64_t r = rng.integer(0, 79);
            if (r < 10) return -L::infinity();
            if (r < 12) return L::infinity();
            if (r < 13) return L::quiet_NaN();
        }
        return static_cast<T>(rng.integer(-2, 2));
    });
    m.counts.fill([&] { return static_cast<double>(rng.integer(0, 3)); });
    return m;
}

template <class T>
struct CountingCase {
    CountingMatrix<T> a, b, c;  // c: what the product is given (poisoned, or C_old with accumulate)
    CountingMatrix<T> expected;
    std::int64_t batch = 1;
    bool accumulate = false;
};

// An output for a case: every byte poisoned (elements NaN-like 0xFF, padding 0xA5).
template <class T>
CountingMatrix<T> poisoned_counting_output(std::int64_t rows, std::int64_t cols, const Geometry& values,
                                           const Geometry& counts) {
    return {with_poison(make_matrix<T>(rows, cols, values, kPoisonFF), kPoison),
            with_poison(make_matrix<double>(rows, cols, counts, kPoisonFF), kPoison)};
}

// t.expected from t.a, t.b and t.c (C_old with accumulate) by the reference, batch by batch.
template <class T>
void expect_from_reference(CountingCase<T>& t) {
    t.expected = t.c;
    for (std::int64_t b = 0; b < t.batch; ++b) {
        const std::int64_t ab = t.a.values.batch_stride ? b : 0, ac = t.a.counts.batch_stride ? b : 0;
        const std::int64_t bb = t.b.values.batch_stride ? b : 0, bc = t.b.counts.batch_stride ? b : 0;
        reference::counting_gemm<T>(std::as_const(t.a.values).view(ab), std::as_const(t.a.counts).view(ac),
                                    std::as_const(t.b.values).view(bb), std::as_const(t.b.counts).view(bc),
                                    t.expected.values.view(b), t.expected.counts.view(b), t.accumulate);
    }
}

// A case with fresh inputs; the output's elements are poisoned (or, with accumulate, hold a random
// C_old), its padding the poison, and `expected` follows from the reference.
template <class T>
CountingCase<T> make_counting_case(Rng& rng, const CountingShape& s, const CountingGeometry& g, bool edges,
                                   bool accumulate) {
    CountingCase<T> t;
    t.batch = s.batch;
    t.accumulate = accumulate;
    t.a = random_counting<T>(rng, s.m, s.k, g.av, g.ac, edges);
    t.b = random_counting<T>(rng, s.k, s.n, g.bv, g.bc, edges);
    t.c = accumulate ? random_counting<T>(rng, s.m, s.n, g.cv, g.cc, edges)
                     : poisoned_counting_output<T>(s.m, s.n, g.cv, g.cc);
    expect_from_reference(t);
    return t;
}

template <class T>
::testing::AssertionResult counting_matches(const CountingCase<T>& t, const CountingMatrix<T>& actual) {
    auto values = exactly_equal("C values", t.expected.values, actual.values);
    if (!values) return values;
    return exactly_equal("C counts", t.expected.counts, actual.counts);
}

inline std::string describe(const CountingShape& s, int combination, bool broadcast, bool accumulate) {
    return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
           " batch=" + std::to_string(s.batch) + " layouts=" + std::to_string(combination) +
           (broadcast ? " broadcast" : "") + (accumulate ? " accumulate" : "");
}

}  // namespace tropical::testing
