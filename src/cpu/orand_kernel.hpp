#pragma once
// OrAnd's SIMD kernels (cpu/orand_kernel.cpp, compiled once per target and chosen at run time like
// the other semirings' products): bytes packed into bits, and the rows of a product computed from
// bits. cpu/orand.cpp lays the bits out, cuts the work into tasks and runs them on the pool.
#include <cstdint>

namespace tropical::cpu {

// B's rows of bits are padded to a multiple of this many words (with zeros), so that the kernel
// loads whole vectors of them on every target (8 words: one AVX-512 vector).
constexpr std::int64_t kOrAndRowWordsMultiple = 8;
// The widest block of columns the kernel takes (its running OR of B's rows stays in L1).
constexpr std::int64_t kOrAndMaxBlockWords = 512;

// Rows [row0, row1) of C = A (x) B, from A's rows packed along K (row i: a + i * a_words) and B's
// rows packed along N (row k: b + k * b_words, b_words a multiple of kOrAndRowWordsMultiple), in
// blocks of columns of `block_words` words (a multiple of kOrAndRowWordsMultiple).
struct OrAndRows {
    const std::uint64_t* a = nullptr;
    std::int64_t a_words = 0;
    const std::uint64_t* b = nullptr;
    std::int64_t b_words = 0;
    std::int64_t n = 0, block_words = 0;
    std::uint8_t* c = nullptr;
    std::int64_t c_rs = 0, c_cs = 0;
    std::int32_t* idx = nullptr;  // argmax (the first k of each true result, -1 for a false one), or null
    std::int64_t idx_rs = 0, idx_cs = 0;
    bool accumulate = false;  // C = C OR A (x) B (not with argmax)
    std::int64_t row0 = 0, row1 = 0;
};

void orand_rows(const OrAndRows& task);

// `count` contiguous bytes into ceil(count / 64) words, bit t of word w true where byte 64 w + t is
// nonzero; the bits past `count` clear.
void orand_pack_bytes(const std::uint8_t* bytes, std::int64_t count, std::uint64_t* out);

}  // namespace tropical::cpu
