// OrAnd on the CPU: C[i,j] = OR_k (A[i,k] AND B[k,j]) on booleans, from bytes or from operands
// packed into 32-bit words, and the packing itself, as src/reference/reference.hpp defines them.
//
// Each distinct matrix of A (rows) and of B (columns) is first packed along K into 64-bit words in
// buffers of its own (a broadcast operand once), the bits past K clear; then every result is the
// OR of a row's and a column's ANDs, word by word, stopping at the first nonzero one: that word's
// lowest set bit is the argmax. Results are computed in bands of rows, one task each, and columns
// in groups whose words stay in the core's cache while a band's rows pass over them. The bits are
// plain 64-bit integer work, so there is no SIMD dispatch here (the compiler vectorises the
// packing loops where it can).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "cpu/host.hpp"
#include "cpu/thread_pool.hpp"

namespace tropical::cpu {
namespace {

// A thread is worth waking for this many word ANDs (about 0.1 ms of one core's work).
constexpr double kWordsPerThread = double(1 << 18);
// Column words per group: about 256 KiB, a core's L2.
constexpr std::int64_t kGroupWords = 32 * 1024;

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

// Line `o` of matrix `b` of an operand, packed along K into `words` 64-bit words (K booleans).
void pack_line(const Lines& x, bool packed, std::int64_t b, std::int64_t o, std::int64_t k_count, std::uint64_t* out) {
    const std::int64_t words = (k_count + 63) / 64;
    if (packed) {
        const auto* base = static_cast<const std::uint32_t*>(x.data) + b * x.batch_stride + o * x.os;
        const std::int64_t halves = (k_count + 31) / 32;
        for (std::int64_t w = 0; w < words; ++w) {
            const std::uint64_t low = base[2 * w * x.ks];
            const std::uint64_t high = 2 * w + 1 < halves ? base[(2 * w + 1) * x.ks] : 0;
            out[w] = low | high << 32;
        }
        if (k_count % 64 != 0) out[words - 1] &= (std::uint64_t{1} << (k_count % 64)) - 1;  // bits past K
        return;
    }
    const auto* base = static_cast<const std::uint8_t*>(x.data) + b * x.batch_stride + o * x.os;
    for (std::int64_t w = 0; w < words; ++w) {
        const std::int64_t first = 64 * w, count = std::min<std::int64_t>(64, k_count - first);
        std::uint64_t word = 0;
        if (x.ks == 1) {
            for (std::int64_t t = 0; t < count; ++t) word |= std::uint64_t{base[first + t] != 0} << t;
        } else {
            for (std::int64_t t = 0; t < count; ++t) word |= std::uint64_t{base[(first + t) * x.ks] != 0} << t;
        }
        out[w] = word;
    }
}

// Every line of every distinct matrix of an operand (count of them, `lines` lines each), packed
// into `out` (count x lines x words), on the pool.
void pack_all(const Lines& x, bool packed, std::int64_t count, std::int64_t lines, std::int64_t k_count,
              std::vector<std::uint64_t>& out, int threads) {
    const std::int64_t words = (k_count + 63) / 64;
    out.resize(static_cast<std::size_t>(count * lines * words));
    if (words == 0) return;
    const std::int64_t total = count * lines;
    const int used = threads_for(double(total) * double(words) * 8.0, kWordsPerThread, threads);
    const std::int64_t chunk = std::max<std::int64_t>(1, (total + used * 4 - 1) / (used * 4));
    parallel_for(used, (total + chunk - 1) / chunk, [&](std::int64_t task) {
        for (std::int64_t l = task * chunk; l < std::min(total, (task + 1) * chunk); ++l)
            pack_line(x, packed, l / lines, l % lines, k_count, out.data() + l * words);
    });
}

}  // namespace

void run_orand(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.empty()) return;
    const bool argmax = q.operation == detail::Operation::GemmArgmax, packed = q.packed_k >= 0;
    const std::int64_t words = (s.k + 63) / 64;
    // A broadcast operand (batch stride 0) is one matrix, packed once.
    const std::int64_t a_count = q.a.batch_stride == 0 ? 1 : q.batch, b_count = q.b.batch_stride == 0 ? 1 : q.batch;
    std::vector<std::uint64_t> a_words, b_words;
    pack_all(lines_of(q.a, true), packed, a_count, s.m, s.k, a_words, threads);
    pack_all(lines_of(q.b, false), packed, b_count, s.n, s.k, b_words, threads);

    const double work = double(q.batch) * double(s.m) * double(s.n) * double(std::max<std::int64_t>(words, 1));
    const int used = threads_for(work, kWordsPerThread, threads);
    const std::int64_t bands =
        used <= 1 || q.batch >= 4 * used ? 1 : std::min<std::int64_t>(s.m, (4 * used + q.batch - 1) / q.batch);
    const std::int64_t group = std::max<std::int64_t>(1, kGroupWords / std::max<std::int64_t>(words, 1));
    const auto* c_base = static_cast<std::uint8_t*>(const_cast<void*>(q.c.data));
    const auto* i_base = static_cast<std::int32_t*>(const_cast<void*>(q.argmax.data));
    const std::int64_t c_rs = row_stride(q.c), c_cs = col_stride(q.c);
    const std::int64_t i_rs = argmax ? row_stride(q.argmax) : 0, i_cs = argmax ? col_stride(q.argmax) : 0;
    parallel_for(used, q.batch * bands, [&](std::int64_t task) {
        const std::int64_t b = task / bands, band = task % bands;
        const std::int64_t first = s.m * band / bands, last = s.m * (band + 1) / bands;
        const std::uint64_t* const a = a_words.data() + (a_count == 1 ? 0 : b) * s.m * words;
        const std::uint64_t* const bw = b_words.data() + (b_count == 1 ? 0 : b) * s.n * words;
        auto* const c = const_cast<std::uint8_t*>(c_base) + b * q.c.batch_stride;
        auto* const idx = argmax ? const_cast<std::int32_t*>(i_base) + b * q.argmax.batch_stride : nullptr;
        for (std::int64_t j0 = 0; j0 < s.n; j0 += group) {
            const std::int64_t j1 = std::min(s.n, j0 + group);
            for (std::int64_t i = first; i < last; ++i) {
                const std::uint64_t* const row = a + i * words;
                for (std::int64_t j = j0; j < j1; ++j) {
                    const std::uint64_t* const col = bw + j * words;
                    std::int64_t w = 0;
                    while (w < words && (row[w] & col[w]) == 0) ++w;
                    const bool found = w < words;
                    std::uint8_t& out = c[i * c_rs + j * c_cs];
                    if (argmax) {
                        idx[i * i_rs + j * i_cs] =
                            found ? static_cast<std::int32_t>(64 * w + std::countr_zero(row[w] & col[w])) : -1;
                        out = found ? 1 : 0;
                    } else {
                        out = found || (q.options.accumulate && out != 0) ? 1 : 0;
                    }
                }
            }
        }
    });
}

void run_pack(const detail::Request& q, const detail::Shape& s, int threads) {
    if (q.batch == 0 || s.m == 0 || s.k == 0) return;
    // The outer dimension and K of the bytes and of the words (in words along K).
    const bool as_a = q.pack == PackAs::A;
    const Lines bytes = lines_of(q.a, as_a), out = lines_of(q.c, as_a);
    const std::int64_t words = (s.k + 31) / 32, total = q.batch * s.m;
    const int used = threads_for(double(total) * double(s.k) / 8.0, kWordsPerThread, threads);
    const std::int64_t chunk = std::max<std::int64_t>(1, (total + used * 4 - 1) / (used * 4));
    parallel_for(used, (total + chunk - 1) / chunk, [&](std::int64_t task) {
        std::vector<std::uint64_t> line(static_cast<std::size_t>((s.k + 63) / 64));
        for (std::int64_t l = task * chunk; l < std::min(total, (task + 1) * chunk); ++l) {
            const std::int64_t b = l / s.m, o = l % s.m;
            pack_line(bytes, false, b, o, s.k, line.data());
            auto* const dst =
                static_cast<std::uint32_t*>(const_cast<void*>(out.data)) + b * out.batch_stride + o * out.os;
            for (std::int64_t w = 0; w < words; ++w)
                dst[w * out.ks] = static_cast<std::uint32_t>(line[static_cast<std::size_t>(w / 2)] >> (32 * (w % 2)));
        }
    });
}

}  // namespace tropical::cpu
