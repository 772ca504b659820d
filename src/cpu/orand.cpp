// OrAnd on the CPU: C[i,j] = OR_k (A[i,k] AND B[k,j]) on booleans, from bytes or from operands
// packed into 32-bit words, and the packing itself, as src/reference/reference.hpp defines them.
//
// Each distinct matrix of A and of B (a broadcast operand once) is first packed into 64-bit words
// of its own: A's rows along K, B's rows along N. Then a row of C is the OR of the rows of B that
// A's row selects (cpu/orand_kernel.cpp: SIMD code compiled per target and chosen at run time, as
// the other semirings' products are), so a row costs a few vector ORs per true k of A's row, and a
// dense row only the first few k, which fill it. The scan this replaced (a row's and a column's
// words ANDed until one was nonzero, with scalar 64-bit words) was cheap where inputs are dense but
// scanned all of K for every false result: at 1024^3 on one AVX-512 core the rows of B run about
// 30 times as fast on dense bytes and 50 times on sparse ones (bench/cpu_bench_orand.cpp; where A
// is dense and B has no true element, the worst case here, still 7 to 10 times). That scan made
// SIMD (a row's word ANDed with the same word of a vector of columns) would still scan all of K for
// every false result, where a row of B covers 64 results a word.
//
// Bytes are packed along the direction they are contiguous in, a vector at a time (SIMD compares
// into mask bits); where the bits are wanted along the other direction (A column-major, B
// column-major, or B's packed words, which run along K), 64 x 64 blocks of bits are transposed.
// A column-major C is computed as its transpose, whose rows are contiguous. Results are computed
// in bands of rows, one task each, and columns in blocks whose rows of B stay in the core's cache
// while the band's rows pass over them.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "cpu/host.hpp"
#include "cpu/orand_kernel.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many word operations (about 0.1 ms of one core's work).
constexpr double kWordsPerThread = double(1 << 18);
// The rows of B a block of columns covers: about 512 KiB, a core's L2 or a part of it.
constexpr std::int64_t kBlockBytes = 512 * 1024;

std::int64_t words_for(std::int64_t bits) { return (bits + 63) / 64; }

// The lines (rows of A, columns of B) of an operand as (line, k): element at data + line * os + k * ks.
struct Lines {
    const void* data = nullptr;
    std::int64_t os = 0, ks = 0, batch_stride = 0;
};

// A's rows and B's columns as lines along K (in elements: bytes, or for packed operands 32-bit words).
Lines lines_of(const detail::OperandRef& r, bool rows) {
    const std::int64_t rs = row_stride(r), cs = col_stride(r);
    return {r.data, rows ? rs : cs, rows ? cs : rs, r.batch_stride};
}

// body(l) for every l in [0, total), in chunks on the pool; each costs about `cost` word operations.
template <class Body>
void for_each_line(std::int64_t total, double cost, int threads, Body&& body) {
    if (total <= 0) return;
    const int used = threads_for(double(total) * cost, kWordsPerThread, threads);
    const std::int64_t chunk = std::max<std::int64_t>(1, (total + used * 4 - 1) / (used * 4));
    parallel_for(used, (total + chunk - 1) / chunk, [&](std::int64_t task) {
        for (std::int64_t l = task * chunk; l < std::min(total, (task + 1) * chunk); ++l) body(l);
    });
}

// `count` matrices of `lines` lines of `bits` contiguous bytes each (line o of matrix b at data +
// b * batch_stride + o * line_stride) into `out_words` words a line (zeros past the bits).
void pack_contiguous(const Lines& x, std::int64_t line_stride, std::int64_t count, std::int64_t lines,
                     std::int64_t bits, std::vector<std::uint64_t>& out, std::int64_t out_words, int threads) {
    out.resize(static_cast<std::size_t>(count * lines * out_words));
    const std::int64_t words = words_for(bits);
    for_each_line(count * lines, double(bits) / 64.0 + 1.0, threads, [&](std::int64_t l) {
        const auto* src =
            static_cast<const std::uint8_t*>(x.data) + l / lines * x.batch_stride + l % lines * line_stride;
        std::uint64_t* const dst = out.data() + l * out_words;
        orand_pack_bytes(src, bits, dst);
        std::fill(dst + words, dst + out_words, std::uint64_t{0});
    });
}

// Bit c of x[r] to bit r of x[c]: at each step the halves of 2s x 2s blocks off the diagonal swap.
void transpose64(std::uint64_t* x) {
    std::uint64_t mask = 0x00000000ffffffffULL;
    for (int s = 32; s >= 1; s >>= 1, mask ^= mask << s) {
        for (int r0 = 0; r0 < 64; r0 += 2 * s)
            for (int r = r0; r < r0 + s; ++r) {
                const std::uint64_t t = ((x[r] >> s) ^ x[r + s]) & mask;
                x[r + s] ^= t;
                x[r] ^= t << s;
            }
    }
}

// `count` matrices of p lines of q bits each (`in_words` a line) transposed into q lines of p bits
// (`out_words` >= words_for(p) a line, zeros past p).
void transpose_bits(const std::vector<std::uint64_t>& in, std::int64_t count, std::int64_t p, std::int64_t q,
                    std::int64_t in_words, std::vector<std::uint64_t>& out, std::int64_t out_words, int threads) {
    out.resize(static_cast<std::size_t>(count * q * out_words));
    const std::int64_t p_words = words_for(p), q_words = words_for(q);
    // One task transposes a band of 64 output lines (word w of the input lines) of one matrix.
    for_each_line(count * q_words, double(p_words) * 64.0 * 4.0, threads, [&](std::int64_t task) {
        const std::int64_t b = task / q_words, w = task % q_words;
        const std::uint64_t* const src = in.data() + b * p * in_words;
        std::uint64_t* const dst = out.data() + b * q * out_words;
        const std::int64_t lines = std::min<std::int64_t>(64, q - 64 * w);
        std::uint64_t block[64];
        for (std::int64_t v = 0; v < p_words; ++v) {
            for (std::int64_t c = 0; c < 64; ++c) block[c] = 64 * v + c < p ? src[(64 * v + c) * in_words + w] : 0;
            transpose64(block);
            for (std::int64_t t = 0; t < lines; ++t) dst[(64 * w + t) * out_words + v] = block[t];
        }
        for (std::int64_t t = 0; t < lines; ++t)
            std::fill(dst + (64 * w + t) * out_words + p_words, dst + (64 * w + t + 1) * out_words, std::uint64_t{0});
    });
}

// Every line of every distinct matrix of an operand (count of them, `lines` lines each), packed
// along K into `out` (count x lines x words_for(k_count)).
void pack_along_k(const Lines& x, bool packed, std::int64_t count, std::int64_t lines, std::int64_t k_count,
                  std::vector<std::uint64_t>& out, int threads) {
    const std::int64_t words = words_for(k_count);
    if (words == 0 || lines == 0) {
        out.clear();
        return;
    }
    if (packed) {
        // Two 32-bit words to one, the bits past K cleared (they may hold anything).
        out.resize(static_cast<std::size_t>(count * lines * words));
        const std::int64_t halves = (k_count + 31) / 32;
        for_each_line(count * lines, double(words), threads, [&](std::int64_t l) {
            const auto* base =
                static_cast<const std::uint32_t*>(x.data) + l / lines * x.batch_stride + l % lines * x.os;
            std::uint64_t* const dst = out.data() + l * words;
            for (std::int64_t w = 0; w < words; ++w) {
                const std::uint64_t low = base[2 * w * x.ks];
                const std::uint64_t high = 2 * w + 1 < halves ? base[(2 * w + 1) * x.ks] : 0;
                dst[w] = low | high << 32;
            }
            if (k_count % 64 != 0) dst[words - 1] &= (std::uint64_t{1} << (k_count % 64)) - 1;
        });
        return;
    }
    if (x.ks == 1) {
        pack_contiguous({x.data, 0, 1, x.batch_stride}, x.os, count, lines, k_count, out, words, threads);
        return;
    }
    // The bytes are contiguous across the lines (x.os is 1): packed that way, then transposed.
    std::vector<std::uint64_t> across;
    pack_contiguous(x, x.ks, count, k_count, lines, across, words_for(lines), threads);
    transpose_bits(across, count, k_count, lines, words_for(lines), out, words, threads);
}

}  // namespace

void run_orand(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.empty()) return;
    const bool argmax = q.operation == detail::Operation::GemmArgmax, packed = q.packed_k >= 0;
    // A column-major C is computed as its transpose, C^T = B^T (x) A^T, whose rows are contiguous
    // (C's rows are written a vector at a time; a column-major C's took a byte a result).
    const bool flip = col_stride(q.c) != 1 && row_stride(q.c) == 1;
    const detail::OperandRef& qa = flip ? q.b : q.a;
    const detail::OperandRef& qb = flip ? q.a : q.b;
    const std::int64_t m = flip ? s.n : s.m, n = flip ? s.m : s.n;
    // The lines along K of the left operand's rows and of the right operand's columns.
    const Lines a_rows = lines_of(q.a, true), b_columns = lines_of(q.b, false);
    const Lines& left = flip ? b_columns : a_rows;
    const Lines& right = flip ? a_rows : b_columns;
    const std::int64_t a_words = words_for(s.k);
    const std::int64_t b_words =
        (words_for(n) + kOrAndRowWordsMultiple - 1) / kOrAndRowWordsMultiple * kOrAndRowWordsMultiple;
    // A broadcast operand (batch stride 0) is one matrix, packed once.
    const std::int64_t a_count = qa.batch_stride == 0 ? 1 : q.batch, b_count = qb.batch_stride == 0 ? 1 : q.batch;
    std::vector<std::uint64_t> a_bits, b_bits;
    pack_along_k(left, packed, a_count, m, s.k, a_bits, threads);
    if (!packed && (right.os == 1 || n == 1)) {
        // The right operand's rows are contiguous bytes.
        pack_contiguous({right.data, 0, 1, right.batch_stride}, right.ks, b_count, s.k, n, b_bits, b_words, threads);
    } else {
        std::vector<std::uint64_t> columns;
        pack_along_k(right, packed, b_count, n, s.k, columns, threads);
        transpose_bits(columns, b_count, n, s.k, a_words, b_bits, b_words, threads);
    }

    // The work: for each row, its B row's words per true k (fewer where rows fill early), the true
    // k counted on a sample of A's words.
    const std::size_t step = std::max<std::size_t>(1, a_bits.size() / 4096);
    double true_k = 0;
    for (std::size_t e = 0; e < a_bits.size(); e += step) true_k += std::popcount(a_bits[e]);
    true_k *= double(step);
    const double work =
        true_k * double(q.batch / a_count) * double(b_words) + double(q.batch) * double(m) * double(b_words + 1);
    const int used = threads_for(work, kWordsPerThread, threads);
    const std::int64_t bands =
        used <= 1 || q.batch >= 4 * used ? 1 : std::min<std::int64_t>(m, (4 * used + q.batch - 1) / q.batch);
    const std::int64_t block_words = std::clamp<std::int64_t>(
        kBlockBytes / 8 / std::max<std::int64_t>(s.k, 1) / kOrAndRowWordsMultiple * kOrAndRowWordsMultiple,
        kOrAndRowWordsMultiple, kOrAndMaxBlockWords);
    auto* const c_base = static_cast<std::uint8_t*>(const_cast<void*>(q.c.data));
    auto* const i_base = static_cast<std::int32_t*>(const_cast<void*>(q.argmax.data));
    const std::int64_t c_rs = row_stride(q.c), c_cs = col_stride(q.c);
    const std::int64_t i_rs = argmax ? row_stride(q.argmax) : 0, i_cs = argmax ? col_stride(q.argmax) : 0;
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t b = task / bands, band = task % bands;
        OrAndRows rows;
        rows.a = a_bits.data() + (a_count == 1 ? 0 : b) * m * a_words;
        rows.a_words = a_words;
        rows.b = b_bits.data() + (b_count == 1 ? 0 : b) * s.k * b_words;
        rows.b_words = b_words;
        rows.n = n;
        rows.block_words = block_words;
        rows.c = c_base + b * q.c.batch_stride;
        rows.c_rs = flip ? c_cs : c_rs;
        rows.c_cs = flip ? c_rs : c_cs;
        if (argmax) {
            rows.idx = i_base + b * q.argmax.batch_stride;
            rows.idx_rs = flip ? i_cs : i_rs;
            rows.idx_cs = flip ? i_rs : i_cs;
        }
        rows.accumulate = !argmax && q.options.accumulate;  // argmax writes C
        rows.row0 = m * band / bands;
        rows.row1 = m * (band + 1) / bands;
        orand_rows(rows);
    });
}

void run_pack(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.m == 0 || s.k == 0) return;
    // The outer dimension and K of the bytes and of the words (in words along K).
    const bool as_a = q.pack == PackAs::A;
    const Lines out = lines_of(q.c, as_a);
    const std::int64_t words = (s.k + 31) / 32, line_words = words_for(s.k), total = q.batch * s.m;
    std::vector<std::uint64_t> bits;
    pack_along_k(lines_of(q.a, as_a), false, q.batch, s.m, s.k, bits, threads);
    for_each_line(total, double(words), threads, [&](std::int64_t l) {
        const std::int64_t b = l / s.m, o = l % s.m;
        auto* const dst = static_cast<std::uint32_t*>(const_cast<void*>(out.data)) + b * out.batch_stride + o * out.os;
        const std::uint64_t* const line = bits.data() + l * line_words;
        for (std::int64_t w = 0; w < words; ++w)
            dst[w * out.ks] = static_cast<std::uint32_t>(line[w / 2] >> (32 * (w % 2)));
    });
}

}  // namespace tropical::cpu
