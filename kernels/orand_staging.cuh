// tropical-gemm's device code, the first OrAnd piece (after counting.cuh, before orand.cuh): booleans
// in bytes turned into 32-bit words along K, and the stagers that bring an operand's words, or its
// bytes packed on the way, into shared memory for orand.cuh's product. orand.cuh's header says how
// the words are laid out and why bytes are packed as they are staged.

namespace tg {

// ---------------------------------------------------------------------------------------------
// Bytes to bits.

// Bit 7 of each byte of x set where that byte is nonzero, every other bit clear. Adding 0x7f to the
// low 7 bits of a byte sets its bit 7 where they are not all zero, and never carries out of the
// byte; x's own bit 7 covers the byte 0x80.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned x) {
    return (((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;
}

// 32 bytes (byte t is byte t % 4, little-endian, of x[t / 4]) as a word whose bit t is set where byte
// t is nonzero. Eight bytes at a time: their flags sit at bits 3, 11, 19, 27 (the first four, shifted
// down by 4) and 7, 15, 23, 31 (the other four); one multiplication by 2^21 + 2^14 + 2^7 + 1 moves
// each flag to bit 24 + its position among the eight, and every other product of the sum lands on a
// bit of its own (no carries), so the product's top byte is the eight flags in order. Three byte
// permutations then join the four top bytes. About 40 instructions for 32 bytes.
__device__ __forceinline__ unsigned bits_of(const unsigned (&x)[8]) {
    unsigned top[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) top[q] = ((nonzero_bytes(x[2 * q]) >> 4) | nonzero_bytes(x[2 * q + 1])) * 0x00204081u;
    return __byte_perm(__byte_perm(top[0], top[1], 0x0073), __byte_perm(top[2], top[3], 0x0073), 0x5410);
}

// Across the warp (every lane takes part): bit c of lane l's word goes to bit l of lane c's word.
// Five steps, each swapping the off-diagonal blocks of one size between lane pairs.
__device__ __forceinline__ unsigned transpose32(unsigned x) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
        // Bits whose index has bit s clear.
        const unsigned low = s == 16  ? 0x0000ffffu
                             : s == 8 ? 0x00ff00ffu
                             : s == 4 ? 0x0f0f0f0fu
                             : s == 2 ? 0x33333333u
                                      : 0x55555555u;
        const unsigned y = __shfl_xor_sync(0xffffffffu, x, s);
        x = (lane & s) ? (x & ~low) | ((y >> s) & low) : (x & low) | ((y << s) & ~low);
    }
    return x;
}

// The widest loads (16, 4 or 1 bytes; 8-byte alignment takes the 4-byte loads, which keeps the
// kernels' code and NVRTC's time smaller) that a run of 32 bytes starting at base + a multiple of 32
// plus a multiple of `stride` can use: what divides the address and the stride. 1 also where the
// run is not contiguous (run_stride != 1).
__device__ __forceinline__ int run_alignment(const void* base, long long stride, long long run_stride) {
    if (run_stride != 1) return 1;
    const unsigned long long v = reinterpret_cast<unsigned long long>(base) | static_cast<unsigned long long>(stride);
    return v % 16 == 0 ? 16 : v % 4 == 0 ? 4 : 1;
}

struct Run32 {
    unsigned x[8];
};

// load_run32's checked path (edges; unaligned or strided runs), byte by byte: out of line, so that
// its 32 loads and branches are compiled once rather than at every staging site.
__device__ __noinline__ Run32 load_run32_bytes(const unsigned char* p, int n, long long run_stride) {
    Run32 r;
#pragma unroll
    for (int h = 0; h < 8; ++h) {
        unsigned w = 0;
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (4 * h + e < n) w |= static_cast<unsigned>(p[(4 * h + e) * run_stride]) << (8 * e);
        r.x[h] = w;
    }
    return r;
}
__device__ __forceinline__ void load_run32_bytes(unsigned (&x)[8], const unsigned char* p, int n,
                                                 long long run_stride) {
    const Run32 r = load_run32_bytes(p, n, run_stride);
#pragma unroll
    for (int h = 0; h < 8; ++h) x[h] = r.x[h];
}

// The 32 bytes p[0], p[run_stride], ... as 8 little-endian words, of which the first n exist (the
// others read as 0; n may be 0 or less). The whole-run paths need `align` (run_alignment) and n >= 32.
__device__ __forceinline__ void load_run32(unsigned (&x)[8], const unsigned char* p, int n, int align,
                                           long long run_stride) {
    if (n >= 32 && align == 16) {
        const uint4 u = reinterpret_cast<const uint4*>(p)[0], v = reinterpret_cast<const uint4*>(p)[1];
        x[0] = u.x, x[1] = u.y, x[2] = u.z, x[3] = u.w, x[4] = v.x, x[5] = v.y, x[6] = v.z, x[7] = v.w;
    } else if (n >= 32 && align >= 4) {
#pragma unroll
        for (int h = 0; h < 8; ++h) x[h] = reinterpret_cast<const unsigned*>(p)[h];
    } else {
        load_run32_bytes(x, p, n, run_stride);
    }
}

// A count of remaining elements as an int, clamped to [-1, 2^30] (runs are 32 long).
__device__ __forceinline__ int run_left(long long x) { return x < 0 ? -1 : (x > (1LL << 30) ? (1 << 30) : int(x)); }

// ---------------------------------------------------------------------------------------------
// Staging of one operand, [word][outer] in shared memory. OUTER: rows of A or columns of B per
// tile; SK: words per stage. "Along K": the operand's bytes or words run along K in memory (a
// row-major A, a column-major B), else along the outer dimension.

// Packed operands: the words as the Tiled kernels stage their elements (staging.cuh's Stager), the
// stage in flight in `regs`; the tail word's bits past K cleared on the way where asked.
template <int OUTER, int SK, int THREADS>
struct WordStager {
    using Words = Stager<unsigned, OUTER, SK, THREADS>;
    static constexpr int LD = Words::LD;
    // The padding zero of the Stager's checked fetch.
    struct Zero {
        static __device__ __forceinline__ unsigned zero() { return 0u; }
        static __device__ __forceinline__ unsigned stage(unsigned x) { return x; }
    };

    Words words;
    Vec16<unsigned> regs[Words::VECS];

    // Whether whole stages of an operand load as 128-bit vectors.
    static __device__ __forceinline__ bool vec_ok(const unsigned* base, long long os, long long ks) {
        return Words::vec_ok(base, os, ks);
    }

    __device__ __forceinline__ WordStager(const unsigned* base, long long os, long long ks, long long outer_begin)
        : words(base, os, ks, outer_begin) {}

    // Stage q: fast as the Stager's; `last` the operand's last word and `tail` the bits of it to
    // keep (all ones: nothing to clear), applied on the checked path (a stage holding the last word
    // of a K that is no multiple of 32 never takes the fast one).
    __device__ __forceinline__ void fetch(bool fast, long long os, long long ks, bool along_k, long long outer_left,
                                          long long words_left, long long q, long long last, unsigned tail) {
        words.template fetch<Zero>(regs, fast, os, ks, outer_left, words_left);
        if (!fast && tail != 0xffffffffu) {
            // Rare: computed from values the compiler cannot see through (not hoisted).
            const long long at = opaque(last) - q * SK;
            const int tid = opaque(static_cast<int>(threadIdx.x));
#pragma unroll
            for (int r = 0; r < Words::VECS; ++r) {
                int o, k;
                Words::place(along_k, r, o, k, tid);
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (k + (along_k ? e : 0) == at) regs[r].v[e] &= tail;
            }
        }
    }

    __device__ __forceinline__ void stash(unsigned* tile, bool along_k, long long ks) {
        words.template stash<Zero, false>(tile, regs, along_k);
        words.next_stage(ks);
    }
};

// Byte operands: a stage is OUTER x SK words, each from a run of 32 bytes: along K, the run of
// (row o, word w), one per thread, consecutive threads on consecutive rows; along the outer
// dimension, a warp takes 32 rows x one word, lane l the run of 32 rows at k = 32 w + l, and the
// transpose hands lane c the word of row c. Either way each thread stores one word per task to
// [w][o], consecutive lanes to consecutive rows (no bank conflicts).
template <int OUTER, int SK, int THREADS>
struct ByteStager {
    static constexpr int TASKS = OUTER * SK / THREADS;  // words each thread makes per stage
    static constexpr int WARPS = THREADS / 32;
    static_assert(TASKS >= 1 && OUTER * SK == TASKS * THREADS && OUTER % 32 == 0 && THREADS % 32 == 0,
                  "byte staging map");

    unsigned raw[TASKS][8];  // the stage in flight: each task's 32 bytes

    // (The word stager's question; byte runs choose their loads per run.)
    static __device__ __forceinline__ bool vec_ok(const unsigned*, long long, long long) { return false; }

    // In-stage coordinates of task r: the run's first row and word, and for along-K runs its row.
    static __device__ __forceinline__ void place(bool along_k, int r, int& o, int& w) {
        if (along_k) {
            const int v = r * THREADS + static_cast<int>(threadIdx.x);
            o = v % OUTER;
            w = v / OUTER;
        } else {
            const int t = r * WARPS + static_cast<int>(threadIdx.x) / 32;
            o = (t % (OUTER / 32)) * 32;
            w = t / (OUTER / 32);
        }
    }

    // The bytes of stage q (k in [q * SK * 32, (q + 1) * SK * 32)) of the tile whose first row is
    // outer_begin: outer_left rows remain from there, K in all; outer and k strides as the operand
    // is seen (element (o, k) at base[o * os + k * ks]); align: run_alignment of the runs.
    __device__ __forceinline__ void fetch(const unsigned char* base, long long os, long long ks, bool along_k,
                                          int align, long long outer_begin, long long outer_left, long long K,
                                          long long q) {
        const int lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
        for (int r = 0; r < TASKS; ++r) {
            int o, w;
            place(along_k, r, o, w);
            const long long k0 = (q * SK + w) * 32;
            if (along_k) {
                const int n = o < outer_left ? run_left(K - k0) : 0;
                load_run32(raw[r], base + (outer_begin + o) * os + k0 * ks, n, align, ks);
            } else {
                const long long k = k0 + lane;
                const int n = k < K ? run_left(outer_left - o) : 0;
                load_run32(raw[r], base + (outer_begin + o) * os + k * ks, n, align, os);
            }
        }
    }

    // The stage's words into `tile` (its first word row).
    template <int LD>
    __device__ __forceinline__ void stash(unsigned* tile, bool along_k) const {
        const int lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
        for (int r = 0; r < TASKS; ++r) {
            int o, w;
            place(along_k, r, o, w);
            const unsigned word = bits_of(raw[r]);
            if (along_k) tile[w * LD + o] = word;
            else tile[w * LD + o + lane] = transpose32(word);  // every lane of the warp takes part
        }
    }
};

}  // namespace tg
