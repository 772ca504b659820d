#pragma once
// OrAnd's test inputs and expected results: random booleans in bytes (any nonzero byte is true, so
// the trues take values from 1 to 255), their packed words (with the bits past K holding garbage
// where asked: the kernels must ignore them), and the reference's products, for every path (the
// emulated and real GPU kernels, the CPU path, the C ABI).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tropical/gemm.hpp>
#include "reference/reference.hpp"
#include "support/gemm_test_util.hpp"

namespace tropical::testing {

// Booleans with probability `density` of true; a true byte is any of 1..255.
inline HostMatrix<std::uint8_t> random_booleans(Rng& rng, std::int64_t rows, std::int64_t cols, double density,
                                                const Geometry& g = {}) {
    auto m = make_matrix<std::uint8_t>(rows, cols, g);
    m.fill([&] { return static_cast<std::uint8_t>(rng.chance(density) ? rng.integer(1, 255) : 0); });
    return m;
}

// The words of `bytes` packed along K for operand `as` (an A: M x K -> M x ceil(K/32); a B: K x N ->
// ceil(K/32) x N), stored with geometry g; with `garbage`, the bits past K of each last word are
// random instead of 0.
inline HostMatrix<std::uint32_t> packed_words(const HostMatrix<std::uint8_t>& bytes, PackAs as, const Geometry& g,
                                              Rng* garbage = nullptr) {
    const bool as_a = as == PackAs::A;
    const std::int64_t k = as_a ? bytes.cols : bytes.rows, words = (k + 31) / 32;
    auto out = make_matrix<std::uint32_t>(as_a ? bytes.rows : words, as_a ? words : bytes.cols, g);
    for (std::int64_t b = 0; b < out.distinct(); ++b) {
        reference::pack_bits(bytes.view(b), !as_a, out.view(b));
        if (garbage && k % 32 != 0) {
            const std::uint32_t past = ~((std::uint32_t{1} << (k % 32)) - 1);
            const std::int64_t outer = as_a ? out.rows : out.cols;
            for (std::int64_t o = 0; o < outer; ++o) {
                std::uint32_t& w = as_a ? out.at(b, o, words - 1) : out.at(b, words - 1, o);
                w |= static_cast<std::uint32_t>(garbage->integer(0, 0xffffffffLL)) & past;
            }
        }
    }
    return out;
}

// C (and argmax) of the product of booleans, by the reference, batch by batch (a broadcast operand's
// one matrix for every product).
inline HostMatrix<std::uint8_t> reference_orand(const HostMatrix<std::uint8_t>& a, const HostMatrix<std::uint8_t>& b,
                                                const HostMatrix<std::uint8_t>& c, bool accumulate = false) {
    HostMatrix<std::uint8_t> out = c;
    for (std::int64_t n = 0; n < c.count; ++n)
        reference::gemm<std::uint8_t>(Semiring::OrAnd, a.view(a.batch_stride ? n : 0), b.view(b.batch_stride ? n : 0),
                                      out.view(n), accumulate);
    return out;
}

inline std::pair<HostMatrix<std::uint8_t>, HostMatrix<std::int32_t>> reference_orand_argmax(
    const HostMatrix<std::uint8_t>& a, const HostMatrix<std::uint8_t>& b, const HostMatrix<std::uint8_t>& c,
    const HostMatrix<std::int32_t>& argmax) {
    std::pair<HostMatrix<std::uint8_t>, HostMatrix<std::int32_t>> out{c, argmax};
    for (std::int64_t n = 0; n < c.count; ++n)
        reference::gemm_argmax<std::uint8_t>(Semiring::OrAnd, a.view(a.batch_stride ? n : 0),
                                             b.view(b.batch_stride ? n : 0), out.first.view(n), out.second.view(n));
    return out;
}

// The K values every OrAnd test walks: none, one, around the word size and a few words, past a
// slice (512) of the kernels.
inline const std::vector<std::int64_t>& orand_ks() {
    static const std::vector<std::int64_t> ks = {0, 1, 31, 32, 33, 95, 600, 1056};
    return ks;
}

// A product's inputs and C (poisoned), for each of the 8 layout combinations, with some padding.
struct OrAndProblem {
    HostMatrix<std::uint8_t> a, b, c;
    HostMatrix<std::int32_t> argmax;
};

inline OrAndProblem orand_problem(Rng& rng, std::int64_t m, std::int64_t n, std::int64_t k, double density,
                                  const Geometries& g) {
    OrAndProblem p{random_booleans(rng, m, k, density, g.a), random_booleans(rng, k, n, density, g.b),
                   make_matrix<std::uint8_t>(m, n, g.c), make_matrix<std::int32_t>(m, n, g.argmax)};
    return p;
}

// The geometry of words packed from an operand of geometry g: the same layout and batch, padding
// of its own (some rows then start off 16 bytes), and the words' own gap.
inline Geometry words_geometry(const Geometry& g, std::int64_t pad) {
    Geometry w = g;
    w.pad = pad;
    w.gap = g.gap ? pad + 1 : 0;
    return w;
}

}  // namespace tropical::testing
