// The parameters every kernel receives by value. One definition for both sides: the host includes
// this file (src/gemm/plan.cpp fills these structs) and the build joins it, first, into the source
// that NVRTC compiles (CMakeLists.txt names the pieces in their order). Plain C++ that NVRTC and the
// host compiler lay out alike: no headers, no std::.
#ifndef TROPICAL_KERNEL_PARAMS_H
#define TROPICAL_KERNEL_PARAMS_H

// Element (b,i,j) of an operand is ((T*)ptr)[b*batch_stride + i*row_stride + j*col_stride].
struct TgOperand {
    void* ptr;
    long long row_stride;
    long long col_stride;
    long long batch_stride;
};

// a: M x K, b: K x N, c: M x N, argmax: M x N int32 (ptr null unless the kernel tracks it).
// OrAnd (kernels/orand.cuh): c holds bytes; a and b hold bytes, or for the Packed kernels 32-bit words
// with K packed along it (a: M x ceil(K/32) words, b: ceil(K/32) x N, strides in words), k in bits.
// k_splits > 1 (32-bit products without accumulate): K is cut into that many chunks
// (tg_split_chunk), each computed by its own blocks (blockIdx.z runs over batch x k_splits): the
// SplitK kernels combine them into C with atomics, which must hold the semiring's zero before the
// launch; the Serial argmax kernels merge their (value, k) pairs into C and argmax one block at a
// time per tile, which must hold the zero and -1 (the host fills both).
struct TgGemmParams {
    TgOperand a, b, c, argmax;
    long long m, n, k, batch;
    int accumulate;
    int k_splits;
};

// How grad_C[i,j] reaches the gradient (TgBackwardParams::route): as it is (MaxPlus, MinPlus); times
// the other operand, B[k,j] for grad_A and A[i,k] for grad_B (MaxMul, the product rule); or only to
// the operand whose value the term took, the min of A[i,k] and B[k,j] (MaxMin) or the max (MinMax),
// A's on a tie and where A is NaN.
enum TgRoute { kTgRouteAsIs = 0, kTgRouteProduct = 1, kTgRouteToMin = 2, kTgRouteToMax = 3 };

// For every (b,i,j) whose argmax k is in [0, K), by `route`:
//   grad_a: grad[i,k] += grad_c[i,j] (x route)        grad_b: grad[k,j] += grad_c[i,j] (x route)
// a and b are read where the route needs them (ptr null otherwise).
// overwrite: grad = route(...) instead of grad += (only with the shared-memory path; see backward()).
struct TgBackwardParams {
    TgOperand grad_c, argmax, a, b, grad;
    long long m, n, k, batch;
    int route;
    int overwrite;
};

// LogPlus's gradients (kernels/logplus_backward.cuh): out (p x q, the gradient or its transpose) =
// sum over r of g[., r] * exp(other[r, .] - c[., r] + self[., .]), g and c p x r (grad_C and C or
// their transposes), other r x q, self p x q (the operand whose gradient this is, or its transpose);
// out is overwritten, or added to where accumulate.
struct TgLogBackwardParams {
    TgOperand g, c, other, self, out;
    long long p, q, r, batch;
    int accumulate;
};

// PackBits: booleans in bytes (nonzero is true) packed along K into 32-bit words, bit k % 32 of word
// k / 32 (kernels/orand.cuh). bytes is `outer` x K, words `outer` x ceil(K/32): each operand's
// row_stride steps along the outer dimension and col_stride along K (the host swaps the strides of
// an operand packed along its rows). The bits past K in the last word are written as 0.
struct TgPackParams {
    TgOperand bytes, words;
    long long outer, k, batch;
};

// Backtrack (kernels/backtrack.cuh): for each of the `rows` rows b, path[b, steps] = last[b, 0] and
// path[b, t] = back[t][b, path[b, t + 1]] for t = steps - 1 ... 0 (back has `steps` matrices of rows x
// states, its batch stride stepping t). An index outside [0, states) ends the walk: that entry and
// the earlier ones of the row are written -1.
struct TgBacktrackParams {
    TgOperand back, last, path;
    long long rows, states, steps;
};

// Bytes of each row of grad_B that one block of the shared-memory grad_B path takes (see
// kernels/backward.cuh): its K rows of them must fit in the shared memory the host gives the launch.
constexpr int kTgBackwardBSlabBytes = 32;

// The Batched argmax kernels (kernels/main_loop.cuh, PANEL) keep up to kTgPanelSlices consecutive
// slices of both operands resident in dynamic shared memory, so that each result's recorded slice is
// rescanned from there. A slice of the panel is bk rows of A's tile (bm elements each) and bk rows of
// B's (bn each), every row padded by 16 bytes as the staging pads it, then 16 bytes more so that
// consecutive slices begin in different banks. The host gives a launch min(slices of K, kTgPanelSlices)
// of them (at least one).
constexpr int kTgPanelSlices = 16;
#ifdef __CUDACC_RTC__
#define TG_HOST_AND_DEVICE __host__ __device__  // NVRTC compiles no unannotated (host) function
#else
#define TG_HOST_AND_DEVICE
#endif
TG_HOST_AND_DEVICE constexpr long long tg_panel_slice_elements(int bm, int bn, int bk, int element_bytes) {
    return static_cast<long long>(bk) * (bm + 16 / element_bytes) +
           static_cast<long long>(bk) * (bn + 16 / element_bytes) + 16 / element_bytes;
}

// The k of each chunk of a split K (the last chunks may hold fewer, or none): whole slices of bk,
// so that each chunk keeps the operands' alignment.
TG_HOST_AND_DEVICE constexpr long long tg_split_chunk(long long k, long long splits, int bk) {
    return ((k + splits - 1) / splits + bk - 1) / bk * bk;
}

// The Serial argmax kernels' lock of a tile: its first argmax element holds this value while one
// block merges into the tile, and the element's argmax otherwise (an argmax is never below -1).
constexpr int kTgTileLocked = -2147483647 - 1;

// The counting semiring's products (kernels/counting.cuh): `values` is a product's block, its a, b
// and c the value matrices (argmax unused, k_splits 1), and the counts (double) lie in their own
// matrices with their own strides. A struct of its own rather than three more operands in
// TgGemmParams, so that the other kernels' parameter block, and so their code, stays as it was.
struct TgCountingParams {
    TgGemmParams values;
    TgOperand a_count, b_count, c_count;
};

#endif  // TROPICAL_KERNEL_PARAMS_H
