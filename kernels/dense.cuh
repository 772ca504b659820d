// tropical-gemm's device code: the Dense kernels' loop (after the Small loop, before the backward
// kernels).

namespace tg {

// Dense products: batches of products of at most 16 x 16 x 16 whose A, B and C are each one
// contiguous row-major array (ld equal to the columns), 16-byte aligned, K and N whole 16-byte
// vectors (src/gemm/plan.cpp checks all of it, or plans the Tiny kernel). Such a product is a few
// kilobytes, so the batch is bound by memory once the per-element work of the general loop is
// gone: a block of 64 threads takes one product at a time, reads A and B as whole 16-byte vectors
// (each thread the same vectors of every product, so where each lands in shared memory is worked
// out once), with no bounds to check but the product's own, while the next product's vectors are
// already in flight; each thread computes one row's 4 adjacent results of C and stores them as
// whole vectors. No argmax: those products take the Tiny kernels.
template <class Cfg, class S, class T>
__device__ __forceinline__ void gemm_dense(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int SIDE = Cfg::bm, THREADS = Cfg::threads, VEC = 16 / sizeof(T);
    static_assert(Cfg::bn == SIDE && Cfg::bk == SIDE && Cfg::tm == 1 && Cfg::tn == 4 && THREADS == SIDE * SIDE / 4,
                  "a thread owns 4 adjacent results of one row of a SIDE x SIDE x SIDE product");
    // Vectors of one operand a thread loads (a SIDE x SIDE operand holds SIDE * SIDE / VEC).
    constexpr int LOADS = (SIDE * SIDE / VEC + THREADS - 1) / THREADS;
    // Integers are staged (the zero clamped to the sentinel); floats' -0 is normalised at the end.
    constexpr bool STAGE = IsInt<T>::value;
    // A transposed, one padding column: the 8 rows a warp reads at one k fall in 8 banks. B's rows
    // SIDE wide, so that a thread's 4 results read whole aligned vectors.
    __shared__ T sa[SIDE][SIDE + 1];
    __shared__ __align__(16) T sb[SIDE][SIDE];

    const int t = threadIdx.x;
    const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
    const int a_vecs = M * K / VEC, b_vecs = K * N / VEC;
    // Where this thread's vectors land: A's vector v is row v / (K / VEC) from column
    // (v % (K / VEC)) * VEC, B's likewise over N.
    int a_row[LOADS], a_col[LOADS], b_row[LOADS], b_col[LOADS];
#pragma unroll
    for (int r = 0; r < LOADS; ++r) {
        const int v = t + r * THREADS;
        a_row[r] = v / (K / VEC), a_col[r] = v % (K / VEC) * VEC;
        b_row[r] = v / (N / VEC), b_col[r] = v % (N / VEC) * VEC;
    }
    Vec16<T> ra[LOADS], rb[LOADS];
    auto fetch = [&](long long b) {
        const Vec16<T>* const a = reinterpret_cast<const Vec16<T>*>(element<const T>(p.a, b, 0, 0));
        const Vec16<T>* const bb = reinterpret_cast<const Vec16<T>*>(element<const T>(p.b, b, 0, 0));
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            if (t + r * THREADS < a_vecs) ra[r] = a[t + r * THREADS];
            if (t + r * THREADS < b_vecs) rb[r] = bb[t + r * THREADS];
        }
    };
    const int row = t / (SIDE / 4), col0 = t % (SIDE / 4) * 4;

    if (blockIdx.z < p.batch) fetch(blockIdx.z);
    for (long long b = blockIdx.z; b < p.batch; b += gridDim.z) {
        __syncthreads();  // every thread is done reading the previous product
#pragma unroll
        for (int r = 0; r < LOADS; ++r) {
            if (t + r * THREADS < a_vecs) {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    sa[a_col[r] + e][a_row[r]] = STAGE ? R::stage(ra[r].v[e]) : ra[r].v[e];
            }
            if (t + r * THREADS < b_vecs) {
                Vec16<T> v = rb[r];
                if constexpr (STAGE) {
#pragma unroll
                    for (int e = 0; e < VEC; ++e) v.v[e] = R::stage(v.v[e]);
                }
                *reinterpret_cast<Vec16<T>*>(&sb[b_row[r]][b_col[r]]) = v;
            }
        }
        __syncthreads();
        if (b + gridDim.z < p.batch) fetch(b + gridDim.z);  // in flight while this product is computed

        if (row >= M || col0 >= N) continue;
        T acc[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[j] = R::init();
#pragma unroll 4
        for (int k = 0; k < K; ++k) {
            const T a = sa[k][row];
            Vec16<T> bv[4 / VEC];
#pragma unroll
            for (int g = 0; g < 4 / VEC; ++g) bv[g] = *reinterpret_cast<const Vec16<T>*>(&sb[k][col0 + g * VEC]);
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[j] = R::mac(a, bv[j / VEC].v[j % VEC], acc[j]);
        }
        // N is whole vectors and col0 a multiple of 4, so each vector is inside C or wholly past it.
        T* const c = element<T>(p.c, b, row, col0);
#pragma unroll
        for (int g = 0; g < 4 / VEC; ++g) {
            if (col0 + g * VEC >= N) break;
            Vec16<T> v;
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                v.v[e] = R::finish(acc[g * VEC + e]);
                if constexpr (!STAGE) v.v[e] = v.v[e] + T(0);  // -0 -> +0
            }
            Vec16<T>* const out = reinterpret_cast<Vec16<T>*>(c + g * VEC);
            if (p.accumulate) {
                const Vec16<T> old = *out;
#pragma unroll
                for (int e = 0; e < VEC; ++e) v.v[e] = R::plus(old.v[e] + T(0), v.v[e]);  // an old -0 as +0
            }
            *out = v;
        }
    }
}

}  // namespace tg
