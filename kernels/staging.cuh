// tropical-gemm's device code, piece 2 of 5: tiles and the staging of operands from global into
// shared memory, for the tiled main loop (kernels/main_loop.cuh).

namespace tg {

// A tile of the main loop, instantiated from a row of kernels/catalogue.def (which says why each
// kernel has the tile it has). BM x BN results per block in K-slices of BK (one barrier each); TM x TN
// results per thread; SK: k rows each thread carries through registers at a time (a slice is
// fetched in BK / SK stages, to keep those registers few).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int SK_ = BK_>
struct Tile {
    static constexpr int bm = BM_, bn = BN_, bk = BK_, tm = TM_, tn = TN_, sk = SK_;
    static constexpr int threads = (BM_ / TM_) * (BN_ / TN_);
};

template <class T>
struct alignas(16) Vec16 {
    T v[16 / sizeof(T)];
};

// x, as a value the compiler cannot reason about (nor hoist what depends on it out of a loop).
__device__ __forceinline__ int opaque(int x) {
    asm volatile("" : "+r"(x));
    return x;
}
__device__ __forceinline__ long long opaque(long long x) {
    asm volatile("" : "+l"(x));
    return x;
}

// A count of remaining elements, clamped into int range (tiles are far smaller than 2^30).
__device__ __forceinline__ int left_of(long long x) {
    return x < 0 ? 0 : (x > (1LL << 30) ? (1 << 30) : static_cast<int>(x));
}

// One operand's global -> shared staging. Each thread moves VECS 16-byte vectors per K-slice. A
// vector runs along the operand's contiguous dimension: k for a row-major A or a column-major B, the
// outer dimension (rows of A, columns of B) otherwise. Where the operand is aligned for it a vector
// is one 128-bit load, else (and at the edges of the matrix) VEC scalar loads. Vectors along k go
// to shared memory as VEC scalar stores down the k rows, a warp covering 16 outer indices x 2
// vectors, so that the stores fall in distinct banks; vectors along the outer dimension go as one
// 128-bit store, a warp covering one k row. Shared rows are padded by VEC elements.
// Only the pointers and shared offsets live in registers; the rest is recomputed from the kernel
// parameters where needed, to leave the registers to the accumulators.
template <class T, int OUTER, int BK, int THREADS>
struct Stager {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr int LD = OUTER + VEC;
    static constexpr int VECS = OUTER * BK / (VEC * THREADS);
    static_assert(VECS >= 1 && OUTER * BK == VECS * VEC * THREADS, "staging map");
    static_assert((BK / VEC) % 2 == 0 && OUTER % VEC == 0, "staging map");

    const T* ptr[VECS];  // element 0 of each vector in the current slice
    int smem[VECS];      // shared offset of element 0

    static __device__ __forceinline__ bool k_along(long long outer_stride, long long k_stride) {
        return k_stride == 1 || outer_stride != 1;
    }
    static __device__ __forceinline__ bool vec_ok(const T* base, long long outer_stride, long long k_stride) {
        const bool ka = k_along(outer_stride, k_stride);
        return (ka ? k_stride : outer_stride) == 1 && (ka ? outer_stride : k_stride) % VEC == 0 &&
               reinterpret_cast<unsigned long long>(base) % 16 == 0;
    }
    // In-tile coordinates of vector r's element 0.
    static __device__ __forceinline__ void place(bool ka, int r, int& o, int& k, int tid = threadIdx.x) {
        const int v = r * THREADS + tid;
        if (ka) {
            const int rest = v >> 1;
            o = rest % OUTER;
            k = ((v & 1) + 2 * (rest / OUTER)) * VEC;
        } else {
            o = (v % (OUTER / VEC)) * VEC;
            k = v / (OUTER / VEC);
        }
    }

    __device__ __forceinline__ Stager(const T* base, long long outer_stride, long long k_stride,
                                      long long outer_begin) {
        const bool ka = k_along(outer_stride, k_stride);
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            int o, k;
            place(ka, r, o, k);
            ptr[r] = base + (outer_begin + o) * outer_stride + k * k_stride;
            smem[r] = k * LD + o;
        }
    }

    // Raw values, the semiring's zero outside the matrix (outer_left, k_left: what remains of each
    // dimension from this tile's and slice's first index); staging waits for stash(). fast: the
    // whole slice lies inside the matrix and vec_ok (the caller knows it for the block).
    template <class R>
    __device__ __forceinline__ void fetch(Vec16<T> (&regs)[VECS], bool fast, long long outer_stride, long long k_stride,
                                          long long outer_left, long long k_left) const {
        if (fast) {
#pragma unroll
            for (int r = 0; r < VECS; ++r) regs[r] = *reinterpret_cast<const Vec16<T>*>(ptr[r]);
            return;
        }
        // Everything of this rare path is computed here from values the compiler cannot see
        // through, so that none of it is hoisted into the registers that the main loop needs.
        outer_stride = opaque(outer_stride);
        k_stride = opaque(k_stride);
        outer_left = opaque(outer_left);
        k_left = opaque(k_left);
        const bool ka = k_along(outer_stride, k_stride);
        const bool vec = vec_ok(ptr[0], outer_stride, k_stride);
        const long long cstride = ka ? k_stride : outer_stride;
        const int ol = left_of(outer_left), kl = left_of(k_left);
        const int al = ka ? kl : ol, ac = ka ? ol : kl;
        const int tid = opaque(static_cast<int>(threadIdx.x));
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            int o, k;
            place(ka, r, o, k, tid);
            const int along = ka ? k : o, across = ka ? o : k;
            if (vec && along + VEC <= al && across < ac) {
                regs[r] = *reinterpret_cast<const Vec16<T>*>(ptr[r]);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    regs[r].v[e] = (along + e < al && across < ac) ? ptr[r][e * cstride] : R::zero();
            }
        }
    }

    __device__ __forceinline__ void next_stage(long long k_stride) {
#pragma unroll
        for (int r = 0; r < VECS; ++r) ptr[r] += BK * k_stride;
    }

    template <class R, bool STAGE, bool KA>
    __device__ __forceinline__ void stash_as(T* tile, const Vec16<T> (&regs)[VECS]) const {
#pragma unroll
        for (int r = 0; r < VECS; ++r) {
            Vec16<T> v;
#pragma unroll
            for (int e = 0; e < VEC; ++e) v.v[e] = STAGE ? R::stage(regs[r].v[e]) : regs[r].v[e];
            if constexpr (KA) {
#pragma unroll
                for (int e = 0; e < VEC; ++e) tile[smem[r] + e * LD] = v.v[e];
            } else {
                *reinterpret_cast<Vec16<T>*>(tile + smem[r]) = v;
            }
        }
    }
    template <class R, bool STAGE>
    __device__ __forceinline__ void stash(T* tile, const Vec16<T> (&regs)[VECS], bool ka) const {
        if (ka) stash_as<R, STAGE, true>(tile, regs);
        else stash_as<R, STAGE, false>(tile, regs);
    }
};

}  // namespace tg
