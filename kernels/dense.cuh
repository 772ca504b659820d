// tropical-gemm's device code: the Dense kernels' loop (after the Small loop, before the backward
// kernels).

namespace tg {

// Staging a 16-byte vector of A or B into shared memory, as the Dense and Wide kernels do. STAGE:
// through R::stage, as integers always are (the zero clamped to the sentinel) and floats with argmax
// (whose tracking compares bits: no -0); else stored as they are (the plain floats' -0 is normalised
// in the epilogue). A's vector goes down a column of its transposed copy from `at`, `ld` apart; B's
// stays a vector.
template <bool STAGE, class R, class T>
__device__ __forceinline__ void stage_down(T* to, int at, int ld, const Vec16<T>& v) {
#pragma unroll
    for (int e = 0; e < 16 / static_cast<int>(sizeof(T)); ++e) to[at + e * ld] = STAGE ? R::stage(v.v[e]) : v.v[e];
}
template <bool STAGE, class R, class T>
__device__ __forceinline__ void stage_vector(T* to, Vec16<T> v) {
    if constexpr (STAGE) {
#pragma unroll
        for (int e = 0; e < 16 / static_cast<int>(sizeof(T)); ++e) v.v[e] = R::stage(v.v[e]);
    }
    *reinterpret_cast<Vec16<T>*>(to) = v;
}

// A thread's 4 adjacent k of one row of C into the argmax from `at` (their first): one 16-byte store
// where the argmax's row is contiguous and aligned there (a row-major argmax, as products and
// einsums make it), else one by one in its own layout; columns from `cols` on are left alone.
__device__ __forceinline__ void store_args(int* at, const int (&arg)[4], int cols, long long col_stride) {
    if (col_stride == 1 && cols >= 4 && reinterpret_cast<unsigned long long>(at) % 16 == 0) {
        Vec16<int> v;
#pragma unroll
        for (int j = 0; j < 4; ++j) v.v[j] = arg[j];
        *reinterpret_cast<Vec16<int>*>(at) = v;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (j < cols) at[j * col_stride] = arg[j];
}

// The terms of a thread's 4 results, one k at a time from the group's staged A (one value) and B (4
// values), k ascending, so that with ARGMAX (track_term) ties keep the smallest k. KK > 0: a K of
// KK, unrolled whole, so that the trip count and the loop's bookkeeping vanish (the common K of
// tensor networks: 8, 16, 32); KK = 0: any K.
template <int KK, bool ARGMAX, class R, class T>
__device__ __forceinline__ void dense_terms(T (&acc)[4], int (&arg)[4], const T* a, const T* b, int a_ld, int b_ld,
                                            int K) {
    constexpr int VEC = 16 / sizeof(T);
    const int n = KK > 0 ? KK : K;
#pragma unroll(KK > 0 ? KK : 4)
    for (int k = 0; k < n; ++k) {
        const T x = a[k * a_ld];
        Vec16<T> bv[4 / VEC];
#pragma unroll
        for (int g = 0; g < 4 / VEC; ++g) bv[g] = *reinterpret_cast<const Vec16<T>*>(b + k * b_ld + g * VEC);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if constexpr (ARGMAX) track_term<R>(x, bv[j / VEC].v[j % VEC], acc[j], arg[j], k);
            else acc[j] = R::mac(x, bv[j / VEC].v[j % VEC], acc[j]);
        }
    }
}

// Dense products: batches of products of at most SIDE x SIDE x SIDE (the row's tile: 32) whose A and
// B are each one contiguous row-major array (ld equal to the columns), C row-major, all 16-byte
// aligned, K and N whole 16-byte vectors (src/gemm/plan.cpp checks all of it, or plans the Tiny
// kernel). Such a product is a few kilobytes, so the batch is bound by memory once the per-element
// work of the general loop is gone. A thread computes 4 adjacent results of one row of C, so a
// product takes M x ceil(N / 4) threads and a block takes as many products at once as its threads
// and shared memory hold (4 of 16^3, 1 of 32 x 32 x 8). A and B are read as whole 16-byte vectors,
// each thread the same vectors of every group of products, so where each lands in shared memory is
// worked out once; the next group's vectors are in flight while one group is computed; C's rows are
// stored as vectors. With ARGMAX each thread tracks its results' k as it adds their terms (its
// results' whole K is its own: no merge), and stores the k beside C (store_args).
template <class Cfg, class S, class T, bool ARGMAX>
__device__ __forceinline__ void gemm_dense(const TgGemmParams& p) {
    using R = Ring<S, T>;
    constexpr int SIDE = Cfg::bm, THREADS = Cfg::threads, VEC = 16 / sizeof(T);
    static_assert(Cfg::bn == SIDE && Cfg::bk == SIDE && Cfg::tm == 1 && Cfg::tn == 4 && THREADS == SIDE * SIDE / 4,
                  "a thread owns 4 adjacent results of one row of a SIDE x SIDE x SIDE product");
    // Shared memory of a block: A transposed, a padding row per k (the rows a warp reads at one k
    // fall in distinct banks), room for one whole product and then some; B with rows of whole
    // groups of 4, so that a thread's 4 results read aligned vectors.
    constexpr int A_CAP = 2 * SIDE * SIDE, B_CAP = SIDE * SIDE;
    // Vectors a thread loads per group of products (the group's A holds at most A_CAP values).
    constexpr int LOADS_A = A_CAP / VEC / THREADS, LOADS_B = B_CAP / VEC / THREADS;
    // Integers are staged (stage_down, stage_vector), and floats with argmax; the plain floats' -0 is
    // normalised at the end.
    constexpr bool STAGE = IsInt<T>::value || ARGMAX;
    __shared__ T sa[A_CAP];
    __shared__ __align__(16) T sb[B_CAP];

    const int t = threadIdx.x;
    const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
    const int groups_n = (N + 3) / 4, b_ld = 4 * groups_n, a_ld = M + 1;  // sb's and sa's row lengths
    const int per_product = M * groups_n;                                 // threads
    const int fit_a = A_CAP / (K * a_ld), fit_b = B_CAP / (K * b_ld);
    const int G = min(THREADS / per_product, min(fit_a, fit_b));  // products at once (1 for a whole tile)
    const int a_vecs = M * K / VEC, b_vecs = K * N / VEC;
    // Where this thread's vectors come from (a product of the group, G for none, and its vector)
    // and where in shared memory they land: A's vector v is row v / (K / VEC) from column
    // (v % (K / VEC)) * VEC, B's likewise over N.
    int a_of[LOADS_A], a_vec[LOADS_A], a_at[LOADS_A], b_of[LOADS_B], b_vec[LOADS_B], b_at[LOADS_B];
#pragma unroll
    for (int r = 0; r < LOADS_A; ++r) {
        const int i = t + r * THREADS, g = i / a_vecs, v = i % a_vecs;
        a_of[r] = g < G ? g : G, a_vec[r] = v;
        a_at[r] = g * K * a_ld + v % (K / VEC) * VEC * a_ld + v / (K / VEC);
    }
#pragma unroll
    for (int r = 0; r < LOADS_B; ++r) {
        const int i = t + r * THREADS, g = i / b_vecs, v = i % b_vecs;
        b_of[r] = g < G ? g : G, b_vec[r] = v;
        b_at[r] = g * K * b_ld + v / (N / VEC) * b_ld + v % (N / VEC) * VEC;
    }
    Vec16<T> ra[LOADS_A], rb[LOADS_B];
    auto fetch = [&](long long first) {
#pragma unroll
        for (int r = 0; r < LOADS_A; ++r)
            if (a_of[r] < G && first + a_of[r] < p.batch)
                ra[r] = reinterpret_cast<const Vec16<T>*>(element<const T>(p.a, first + a_of[r], 0, 0))[a_vec[r]];
#pragma unroll
        for (int r = 0; r < LOADS_B; ++r)
            if (b_of[r] < G && first + b_of[r] < p.batch)
                rb[r] = reinterpret_cast<const Vec16<T>*>(element<const T>(p.b, first + b_of[r], 0, 0))[b_vec[r]];
    };
    // This thread's results: product `mine` of the group, row `row`, columns col0 .. col0 + 3.
    const int mine = t / per_product, row = t % per_product / groups_n, col0 = t % per_product % groups_n * 4;
    const T* const a_mine = sa + mine * K * a_ld + row;
    const T* const b_mine = sb + mine * K * b_ld + col0;

    const long long step = static_cast<long long>(gridDim.z) * G;
    if (static_cast<long long>(blockIdx.z) * G < p.batch) fetch(static_cast<long long>(blockIdx.z) * G);
    // This thread's C vector in the group's product `mine`, moved a group on at each step (a 64-bit
    // pointer kept rather than worked out from the product's index for every group).
    T* c_next = element<T>(p.c, static_cast<long long>(blockIdx.z) * G + mine, row, col0);
    const long long c_step = step * p.c.batch_stride;
    for (long long first = static_cast<long long>(blockIdx.z) * G; first < p.batch; first += step) {
        T* const c = c_next;
        c_next += c_step;
        __syncthreads();  // every thread is done reading the previous group
#pragma unroll
        for (int r = 0; r < LOADS_A; ++r)
            if (a_of[r] < G) stage_down<STAGE, R>(sa, a_at[r], a_ld, ra[r]);
#pragma unroll
        for (int r = 0; r < LOADS_B; ++r)
            if (b_of[r] < G) stage_vector<STAGE, R>(sb + b_at[r], rb[r]);
        __syncthreads();
        if (first + step < p.batch) fetch(first + step);  // in flight while this group is computed

        const long long b = first + mine;
        if (mine >= G || b >= p.batch) continue;
        T acc[4];
        int arg[4];  // dead, and removed, unless ARGMAX
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            acc[j] = R::init();
            arg[j] = -1;
        }
        switch (K) {
        case 8: dense_terms<8, ARGMAX, R>(acc, arg, a_mine, b_mine, a_ld, b_ld, K); break;
        case 16: dense_terms<16, ARGMAX, R>(acc, arg, a_mine, b_mine, a_ld, b_ld, K); break;
        case 32: dense_terms<32, ARGMAX, R>(acc, arg, a_mine, b_mine, a_ld, b_ld, K); break;
        default: dense_terms<0, ARGMAX, R>(acc, arg, a_mine, b_mine, a_ld, b_ld, K); break;
        }
        // N is whole vectors and col0 a multiple of 4, so each vector is inside C or wholly past it.
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
            if (!ARGMAX && p.accumulate) {
                const Vec16<T> old = *out;
#pragma unroll
                for (int e = 0; e < VEC; ++e) v.v[e] = R::plus(old.v[e] + T(0), v.v[e]);  // an old -0 as +0
            }
            *out = v;
        }
        if constexpr (ARGMAX) store_args(element<int>(p.argmax, b, row, col0), arg, N - col0, p.argmax.col_stride);
    }
}

}  // namespace tg
