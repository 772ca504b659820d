/* The C ABI of tropical-gemm: the operations of tropical/gemm.hpp, the kernel registry and the
 * kernel cache, for other languages (the Python package calls these and nothing else of the
 * library's). Every function that can fail returns a status; on failure,
 * tropical_last_error_message() holds a message for the calling thread, valid until its next call. */
#ifndef TROPICAL_C_API_H
#define TROPICAL_C_API_H

#include <stdint.h>

#include <tropical/semiring_table.h>
#include <tropical/status.h>
#include <tropical/export.hpp>

#ifdef __cplusplus
extern "C" {
#endif

#define TROPICAL_STATUS_ENUMERATOR(c_suffix, name, value, words) TROPICAL_##c_suffix = value,
typedef enum tropical_status { TROPICAL_STATUS_LIST(TROPICAL_STATUS_ENUMERATOR) } tropical_status;
#undef TROPICAL_STATUS_ENUMERATOR

/* tropical_semiring (TROPICAL_MAXPLUS, ...) and tropical_dtype (TROPICAL_F32, ...) are made from the
 * semiring and element-type tables (tropical/semiring_table.h), and tropical_semiring_facts and
 * tropical_dtype_facts below read their rows. TROPICAL_COUNTING's (value, count) pairs go to
 * tropical_counting_gemm and tropical_counting_contract (the others refuse it); TROPICAL_ORAND takes
 * TROPICAL_U8 (booleans in bytes: nonzero is true, results 0 or 1) or packed words
 * (tropical_gemm_packed). */
typedef enum tropical_layout { TROPICAL_ROW_MAJOR = 0, TROPICAL_COL_MAJOR = 1 } tropical_layout;

/* A matrix (or a batch of them) in device memory (host memory for tropical_host_*); sizes, leading
 * dimension and batch stride in elements. */
typedef struct tropical_matrix {
    const void* data;
    int64_t rows;
    int64_t cols;
    int64_t ld;
    int32_t layout; /* tropical_layout */
    int64_t batch_stride;
} tropical_matrix;

typedef struct tropical_options {
    void* stream;       /* CUstream / cudaStream_t; NULL: the legacy default stream */
    int32_t accumulate; /* nonzero: C = C (+) A(x)B; backward: grad += */
    /* 0: the library asks the driver which device holds the operands, and checks the stream.
     * TROPICAL_DEVICE_HINT(d): the caller vouches that every operand is on CUDA device d and that the
     * stream belongs to d's primary context (as PyTorch's tensors and current stream do); the
     * library then skips those queries. */
    int32_t device_hint;
} tropical_options;

#define TROPICAL_DEVICE_HINT(ordinal) ((int32_t)(ordinal) + 1)

/* C = A (x) B for `batch` products (1 for a single product). options may be NULL. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm(tropical_semiring semiring, tropical_dtype dtype,
                                                   const tropical_matrix* a, const tropical_matrix* b,
                                                   const tropical_matrix* c, int64_t batch,
                                                   const tropical_options* options);

/* The same, writing the int32 argmax too. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_argmax(tropical_semiring semiring, tropical_dtype dtype,
                                                          const tropical_matrix* a, const tropical_matrix* b,
                                                          const tropical_matrix* c, const tropical_matrix* argmax,
                                                          int64_t batch, const tropical_options* options);

/* grad_A (M x K) from grad_C (M x N), argmax, a (M x K) and b (K x N): b is read for MaxMul, MaxMin
 * and MinMax, a for MaxMin and MinMax; either may be NULL where it is not read. TROPICAL_ORAND has no
 * gradient: TROPICAL_UNSUPPORTED. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_backward_a(tropical_semiring semiring, tropical_dtype dtype,
                                                              const tropical_matrix* grad_c,
                                                              const tropical_matrix* argmax, const tropical_matrix* a,
                                                              const tropical_matrix* b, const tropical_matrix* grad_a,
                                                              int64_t batch, const tropical_options* options);

/* grad_B (K x N) likewise: a is read for MaxMul, MaxMin and MinMax, b for MaxMin and MinMax. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_backward_b(tropical_semiring semiring, tropical_dtype dtype,
                                                              const tropical_matrix* grad_c,
                                                              const tropical_matrix* argmax, const tropical_matrix* a,
                                                              const tropical_matrix* b, const tropical_matrix* grad_b,
                                                              int64_t batch, const tropical_options* options);

/* --- The walk back through a chain's argmax tables ------------------------------------------------- */

/* The best paths of a chain of `steps` (T) products with argmax, as tropical::backtrack
 * (tropical/gemm.hpp) writes them: back is T int32 tables of B x S (back[t][b, s]: the state at step
 * t from which state s at step t + 1 is reached best; batch_stride steps from one table to the next),
 * last B x 1 (each row's final state), path B x (T + 1), all int32 descriptors:
 * path[b, T] = last[b, 0], path[b, t] = back[t][b, path[b, t + 1]]. An index outside [0, S) ends a
 * row's walk: that entry and the earlier ones are -1. Asynchronous on options->stream;
 * options->accumulate must be 0. */
TROPICAL_GEMM_EXPORT tropical_status tropical_backtrack(const tropical_matrix* back, int64_t steps,
                                                        const tropical_matrix* last, const tropical_matrix* path,
                                                        const tropical_options* options);

/* --- OrAnd on operands packed along K into 32-bit words -------------------------------------------- */

/* Which operand tropical_pack_bits packs a boolean matrix for: an A (M x K: each row's K columns into
 * words, M x ceil(K/32) of them) or a B (K x N: each column's K rows, ceil(K/32) x N words). */
typedef enum tropical_pack { TROPICAL_PACK_A = 0, TROPICAL_PACK_B = 1 } tropical_pack;

/* Packs booleans in bytes (nonzero is true; a TROPICAL_U8 descriptor) into 32-bit words (a
 * descriptor of uint32 elements, ld in words): bit k % 32 of word k / 32 holds element k along K,
 * the bits past K are written 0. `batch` matrices (batch strides in bytes and in words). Asynchronous
 * on options->stream; options->accumulate must be 0. */
TROPICAL_GEMM_EXPORT tropical_status tropical_pack_bits(const tropical_matrix* bytes, tropical_pack as,
                                                        const tropical_matrix* words, int64_t batch,
                                                        const tropical_options* options);

/* C = A (x) B for TROPICAL_ORAND (the only semiring defined on packed booleans) with A and B packed
 * along K as tropical_pack_bits packs them: a is M x ceil(k/32) words, b ceil(k/32) x N (uint32,
 * either layout, ld in words), c M x N bytes (written 0 or 1). The bits past k in the last word are
 * ignored, whatever they hold. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_packed(tropical_semiring semiring, const tropical_matrix* a,
                                                          const tropical_matrix* b, int64_t k, const tropical_matrix* c,
                                                          int64_t batch, const tropical_options* options);

/* The same, writing the int32 argmax too: the smallest k whose term is true, -1 where none is. */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_packed_argmax(tropical_semiring semiring, const tropical_matrix* a,
                                                                 const tropical_matrix* b, int64_t k,
                                                                 const tropical_matrix* c,
                                                                 const tropical_matrix* argmax, int64_t batch,
                                                                 const tropical_options* options);

/* --- the same operations in host memory, on the CPU (tropical/host.hpp) ---------------------------- */

typedef struct tropical_host_options {
    int32_t accumulate; /* nonzero: C = C (+) A(x)B; backward: grad += */
    int32_t threads;    /* at most this many threads; 0: one per core this process may run on */
} tropical_host_options;

/* tropical_gemm and its siblings with every matrix (the same descriptors) in host memory, computed by
 * SIMD kernels on the CPU's cores. Synchronous: the outputs are written when the call returns. The
 * same semantics, validation and statuses; options may be NULL (overwrite, every core). */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm(tropical_semiring semiring, tropical_dtype dtype,
                                                        const tropical_matrix* a, const tropical_matrix* b,
                                                        const tropical_matrix* c, int64_t batch,
                                                        const tropical_host_options* options);

TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm_argmax(tropical_semiring semiring, tropical_dtype dtype,
                                                               const tropical_matrix* a, const tropical_matrix* b,
                                                               const tropical_matrix* c, const tropical_matrix* argmax,
                                                               int64_t batch, const tropical_host_options* options);

/* The gradients in host memory; a and b as tropical_gemm_backward_a/b read them. TROPICAL_LOGPLUS reads
 * both, and its argmax descriptor carries the forward's C (M x N, of dtype) instead of an argmax. */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm_backward_a(tropical_semiring semiring, tropical_dtype dtype,
                                                                   const tropical_matrix* grad_c,
                                                                   const tropical_matrix* argmax,
                                                                   const tropical_matrix* a, const tropical_matrix* b,
                                                                   const tropical_matrix* grad_a, int64_t batch,
                                                                   const tropical_host_options* options);

TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm_backward_b(tropical_semiring semiring, tropical_dtype dtype,
                                                                   const tropical_matrix* grad_c,
                                                                   const tropical_matrix* argmax,
                                                                   const tropical_matrix* a, const tropical_matrix* b,
                                                                   const tropical_matrix* grad_b, int64_t batch,
                                                                   const tropical_host_options* options);

/* The backtrack in host memory. */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_backtrack(const tropical_matrix* back, int64_t steps,
                                                             const tropical_matrix* last, const tropical_matrix* path,
                                                             const tropical_host_options* options);

/* The packing and the packed products in host memory. */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_pack_bits(const tropical_matrix* bytes, tropical_pack as,
                                                             const tropical_matrix* words, int64_t batch,
                                                             const tropical_host_options* options);

TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm_packed(tropical_semiring semiring, const tropical_matrix* a,
                                                               const tropical_matrix* b, int64_t k,
                                                               const tropical_matrix* c, int64_t batch,
                                                               const tropical_host_options* options);

TROPICAL_GEMM_EXPORT tropical_status tropical_host_gemm_packed_argmax(
    tropical_semiring semiring, const tropical_matrix* a, const tropical_matrix* b, int64_t k, const tropical_matrix* c,
    const tropical_matrix* argmax, int64_t batch, const tropical_host_options* options);

/* --- the counting semiring (tropical/counting.hpp) -------------------------------------------------- */

/* C = A (x) B in the counting tropical semiring (max-plus with multiplicities) for `batch` products,
 * in device memory. Each operand is two matrices of one shape: values of `value_dtype` (TROPICAL_F32
 * or TROPICAL_F64) and counts (double), each with its own layout, ld and batch stride (0
 * broadcasts an input). options->accumulate: C = C (+) A (x) B. options may be NULL. */
TROPICAL_GEMM_EXPORT tropical_status tropical_counting_gemm(
    tropical_dtype value_dtype, const tropical_matrix* a_values, const tropical_matrix* a_counts,
    const tropical_matrix* b_values, const tropical_matrix* b_counts, const tropical_matrix* c_values,
    const tropical_matrix* c_counts, int64_t batch, const tropical_options* options);

/* The same in host memory, on the CPU (synchronous). options may be NULL. */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_counting_gemm(
    tropical_dtype value_dtype, const tropical_matrix* a_values, const tropical_matrix* a_counts,
    const tropical_matrix* b_values, const tropical_matrix* b_counts, const tropical_matrix* c_values,
    const tropical_matrix* c_counts, int64_t batch, const tropical_host_options* options);

/* --- binary tensor contractions (tropical/contract.hpp) --------------------------------------------- */

/* A strided tensor whose dimensions carry index labels: element (i0, i1, ...) is at
 * data + (i0 * strides[0] + i1 * strides[1] + ...) elements. `rank` (0..32) entries each in sizes,
 * strides and labels. */
typedef struct tropical_tensor {
    const void* data;
    int32_t rank;
    const int64_t* sizes;
    const int64_t* strides;
    const int32_t* labels;
} tropical_tensor;

/* C = (+) over the labels C lacks of A (x) B, in device memory (tropical::contract): labels in A, B
 * and C are batch indices, in A or B and C rows or columns, in A and B only contracted; a label
 * repeated in an input takes its diagonal. Runs as one batched product on views of the tensors; a
 * contraction that needs a buffer (strides that admit no view, a label that one input alone holds)
 * is TROPICAL_UNSUPPORTED here. options->accumulate must be 0. */
TROPICAL_GEMM_EXPORT tropical_status tropical_contract(tropical_semiring semiring, tropical_dtype dtype,
                                                       const tropical_tensor* a, const tropical_tensor* b,
                                                       const tropical_tensor* c, const tropical_options* options);

/* The same in host memory, on the CPU, copying or reducing into buffers of its own where needed. */
TROPICAL_GEMM_EXPORT tropical_status tropical_host_contract(tropical_semiring semiring, tropical_dtype dtype,
                                                            const tropical_tensor* a, const tropical_tensor* b,
                                                            const tropical_tensor* c,
                                                            const tropical_host_options* options);

/* The same, also writing into `argmax` (an int32 tensor with C's labels and sizes, any strides) the
 * term that attained each element of C: the row-major flat index over the contracted labels in the
 * order A lists them (a repeated label where it first appears), the smallest that attains it, -1
 * where no term beats the zero (tropical/contract.hpp). No label may be held by one input alone
 * (TROPICAL_INVALID_ARGUMENT: reduce it first). On the GPU, views that would merge the contracted
 * labels in another order are TROPICAL_UNSUPPORTED (list A's contracted dimensions outermost first
 * in memory); on the host they are copied. */
TROPICAL_GEMM_EXPORT tropical_status tropical_contract_argmax(tropical_semiring semiring, tropical_dtype dtype,
                                                              const tropical_tensor* a, const tropical_tensor* b,
                                                              const tropical_tensor* c, const tropical_tensor* argmax,
                                                              const tropical_options* options);
TROPICAL_GEMM_EXPORT tropical_status tropical_host_contract_argmax(tropical_semiring semiring, tropical_dtype dtype,
                                                                   const tropical_tensor* a, const tropical_tensor* b,
                                                                   const tropical_tensor* c,
                                                                   const tropical_tensor* argmax,
                                                                   const tropical_host_options* options);

/* The contraction in the counting semiring: each tensor is its values (value_dtype: TROPICAL_F32 or
 * TROPICAL_F64) and its counts (double), two descriptors of one rank, sizes and labels (any strides),
 * as tropical_counting_gemm takes matrices. On the GPU (needing a buffer: TROPICAL_UNSUPPORTED) and
 * the host, as tropical_contract and tropical_host_contract. */
TROPICAL_GEMM_EXPORT tropical_status tropical_counting_contract(
    tropical_dtype value_dtype, const tropical_tensor* a_values, const tropical_tensor* a_counts,
    const tropical_tensor* b_values, const tropical_tensor* b_counts, const tropical_tensor* c_values,
    const tropical_tensor* c_counts, const tropical_options* options);
TROPICAL_GEMM_EXPORT tropical_status tropical_host_counting_contract(
    tropical_dtype value_dtype, const tropical_tensor* a_values, const tropical_tensor* a_counts,
    const tropical_tensor* b_values, const tropical_tensor* b_counts, const tropical_tensor* c_values,
    const tropical_tensor* c_counts, const tropical_host_options* options);

/* The SIMD instruction set the CPU kernels use on this machine, as Highway names it ("AVX2", "AVX3"
 * for AVX-512, "SSE4", "NEON"; "EMU128" or "SCALAR" for the portable fallback): a static string. */
TROPICAL_GEMM_EXPORT const char* tropical_host_simd_target(void);

/* The message of the last failed call on this thread ("" if none). */
TROPICAL_GEMM_EXPORT const char* tropical_last_error_message(void);

/* A short name for a status ("invalid argument"). */
TROPICAL_GEMM_EXPORT const char* tropical_status_string(tropical_status status);

/* The status's name as tropical/status.h spells it for C++ ("InvalidArgument"), or NULL for a value
 * that is no status: languages that map statuses to their own exceptions iterate from 0 to NULL. */
TROPICAL_GEMM_EXPORT const char* tropical_status_name(tropical_status status);

/* The semiring's name ("maxplus", "maxmin"), or NULL for a value that is no semiring: languages that
 * take semirings by name iterate from 0 to NULL. */
TROPICAL_GEMM_EXPORT const char* tropical_semiring_name(tropical_semiring semiring);

/* 1 where the semiring has a gradient (tropical_gemm_backward_a/b and the host ones take it), 0 where
 * it has none (TROPICAL_COUNTING, TROPICAL_ORAND), -1 for a value that is no semiring. */
TROPICAL_GEMM_EXPORT int32_t tropical_semiring_has_gradient(tropical_semiring semiring);

/* --- the semiring and element-type tables (tropical/semiring_table.h) ------------------------------- */

/* A semiring's row: what other languages need to know of it instead of keeping tables of their own. */
typedef struct tropical_semiring_facts {
    const char* name;         /* "maxplus" (static) */
    const char* plus_word;    /* (+) as its name spells it: "max", "min", "or" */
    const char* times_word;   /* (x) likewise: "plus", "mul", "min", "max", "and" */
    const char* times_symbol; /* (x) in messages: "+", "x", "min", "max", "and" */
    int32_t plus;             /* tropical_plus_kind */
    int32_t times;            /* tropical_times_kind */
    int32_t zero;             /* tropical_identity: x (+) zero = x; K = 0 gives it */
    int32_t one;              /* tropical_identity: x (x) one = x */
    int32_t gradient;         /* tropical_gradient (TROPICAL_GRADIENT_NONE: no backward) */
    int32_t selects;          /* 1: (+) selects one term, so the argmax exists; 0: it combines terms */
    int32_t prefers;          /* +1: (+) keeps the larger value (max, or, counting); -1: the smaller (min) */
    int32_t pairs;            /* 1: elements are (value, count) pairs (tropical_counting_gemm) */
    uint32_t dtypes;          /* bit t set: takes tropical_dtype t (counting: its values' types) */
} tropical_semiring_facts;

/* Semiring `semiring`'s row into *facts; TROPICAL_INVALID_ARGUMENT for a value that is no semiring
 * (languages iterate from 0 until then). */
TROPICAL_GEMM_EXPORT tropical_status tropical_semiring_facts_of(tropical_semiring semiring,
                                                                tropical_semiring_facts* facts);

/* An element type's row. */
typedef struct tropical_dtype_facts {
    const char* tag;       /* "f32": kernel names and messages (static) */
    const char* name;      /* "float32": PyTorch's and NumPy's name (TROPICAL_U8: "uint8"; bool reads as it too) */
    int32_t size;          /* bytes */
    int32_t kind;          /* tropical_dtype_kind */
    const char* kind_word; /* "float", "signed", "boolean" */
    /* The bits of the element each tropical_identity stands for (-inf, +inf, 0, 1 for floats; the
     * minimum, the maximum, 0, 1 for integers; 0, 1, 0, 1 for booleans), in the low `size` bytes, little
     * end first as the host stores them: a semiring's zero is identity_bits[facts.zero]. */
    uint64_t identity_bits[4];
} tropical_dtype_facts;

/* Element type `dtype`'s row into *facts; TROPICAL_INVALID_ARGUMENT for a value that is no type. */
TROPICAL_GEMM_EXPORT tropical_status tropical_dtype_facts_of(tropical_dtype dtype, tropical_dtype_facts* facts);

/* --- the kernel registry (tropical/kernels.hpp) ---------------------------------------------------- */

/* One kernel, in words (static strings, as the warm-up tool prints them). */
typedef struct tropical_kernel_info {
    const char* name;      /* the entry point, e.g. "tropical_gemm_f32_maxplus" */
    const char* group;     /* "gemm", "gemm_argmax", "batched", "backward_a", "backward_b", "pack_bits" */
    const char* operation; /* "gemm", "gemm_argmax", "backward_a", "backward_b", "pack_bits" */
    const char*
        variant; /* "tiled", "splitk", "batched", "small", "tiny", "dense", "wide", "scatter", "packed", "walk", "serial" */
    const char* dtype;    /* "f32", "f64", "i32", "i64", "u8" */
    const char* semiring; /* "maxplus", ..., "orand", or "any" for a kernel that takes it at launch (or has none) */
} tropical_kernel_info;

TROPICAL_GEMM_EXPORT int64_t tropical_kernel_count(void);

/* Kernel `index` (0 to tropical_kernel_count() - 1) into *info. */
TROPICAL_GEMM_EXPORT tropical_status tropical_kernel_info_at(int64_t index, tropical_kernel_info* info);

/* --- the kernel cache (tropical/cache.hpp) --------------------------------------------------------- */

/* The cache folder the library uses, from the environment, into `path` (`capacity` bytes, with the
 * terminating NUL); *enabled is 0 where TROPICAL_GEMM_CACHE=off. */
TROPICAL_GEMM_EXPORT tropical_status tropical_cache_directory(char* path, int64_t capacity, int32_t* enabled);

/* The architecture (XY of sm_XY) of each of this machine's CUDA devices, by ordinal: up to `capacity`
 * into `archs`, how many devices there are into *count. Needs the driver, not a context. */
TROPICAL_GEMM_EXPORT tropical_status tropical_device_architectures(int32_t* archs, int64_t capacity, int64_t* count);

/* The architectures a warm-up compiles for, by the rule of tropical::warm_targets (tropical/cache.hpp):
 * the `count` requested ones (checked against NVRTC where it can be loaded), or with count 0 this
 * machine's GPUs'; up to `capacity` into `archs`, how many into *found. */
TROPICAL_GEMM_EXPORT tropical_status tropical_warm_targets(const int32_t* requested, int64_t count, int32_t* archs,
                                                           int64_t capacity, int64_t* found);

typedef struct tropical_warm_result {
    int32_t compiled;    /* 1: compiled by this call; 0: the cache held a valid entry already */
    int32_t ptx_for_jit; /* 1: stored as PTX for the driver to finish (NVRTC does not know the architecture) */
    double seconds;      /* wall time of the call */
} tropical_warm_result;

/* Puts kernel `name` for sm_<arch> into the disk cache the library uses, compiling it only where the
 * cache lacks a valid entry (tropical::warm_kernel). */
TROPICAL_GEMM_EXPORT tropical_status tropical_warm_kernel(const char* name, int32_t arch, tropical_warm_result* result);

/* --- where NVRTC comes from ------------------------------------------------------------------------ */

/* The places the library looks for NVRTC, in order, one per line, into `out` (`capacity` bytes, with
 * the terminating NUL): $TROPICAL_GEMM_NVRTC alone where it is set; else libnvrtc.so.13 and .12 on
 * the loader's path, the toolkits under $CUDA_HOME and $CUDA_PATH, /usr/local/cuda/lib64, then the
 * fallbacks added below, in the order added. Loads nothing. */
TROPICAL_GEMM_EXPORT tropical_status tropical_nvrtc_search_path(char* out, int64_t capacity);

/* The same places, each with where it came from ("from $CUDA_HOME"), one per line as the path, a tab
 * and those words. Loads nothing. */
TROPICAL_GEMM_EXPORT tropical_status tropical_nvrtc_search_places(char* out, int64_t capacity);

/* Adds `path` (a libnvrtc.so) to the places looked at after the library's own. Takes effect only
 * before NVRTC is first loaded; adding a place twice adds it once. */
TROPICAL_GEMM_EXPORT tropical_status tropical_add_nvrtc_fallback(const char* path);

/* The NVRTC that pip's CUDA wheels install (nvidia-cuda-nvrtc, which PyTorch brings), where the
 * library's own places do not reach: a language whose packages live in site-packages folders names
 * them in `folders`, one per line, and the library adds as fallbacks the wheels' libraries it finds
 * there (<folder>/nvidia/cu.../lib/libnvrtc.so.<major>: nvidia/cu13/lib for CUDA 13,
 * nvidia/cuda_nvrtc/lib for CUDA 12), in the order it tries them: those of CUDA major version
 * `preferred_major` first (the one the application loads itself, e.g. PyTorch's; 0 for none), then
 * the newest first. As tropical_add_nvrtc_fallback: only before NVRTC is first loaded, each once. */
TROPICAL_GEMM_EXPORT tropical_status tropical_add_nvrtc_site_folders(const char* folders, int32_t preferred_major);

/* The libraries tropical_add_nvrtc_site_folders would add for the same arguments, in its order, one
 * per line into `out` (`capacity` bytes, with the terminating NUL). Adds and loads nothing. */
TROPICAL_GEMM_EXPORT tropical_status tropical_nvrtc_site_libraries(const char* folders, int32_t preferred_major,
                                                                   char* out, int64_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* TROPICAL_C_API_H */
