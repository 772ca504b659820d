/* The C ABI of tropical-gemm: the same operations as tropical/gemm.hpp for other languages (the
 * Python package calls these). Every function returns a status; on failure,
 * tropical_last_error_message() holds a message for the calling thread, valid until its next call. */
#ifndef TROPICAL_C_API_H
#define TROPICAL_C_API_H

#include <stdint.h>

#include <tropical/export.hpp>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tropical_status {
    TROPICAL_SUCCESS = 0,
    TROPICAL_INVALID_ARGUMENT = 1,
    TROPICAL_UNSUPPORTED = 2,
    TROPICAL_OUT_OF_MEMORY = 3,
    TROPICAL_NO_DRIVER = 4,
    TROPICAL_NO_DEVICE = 5,
    TROPICAL_NO_COMPILER = 6,
    TROPICAL_COMPILE_ERROR = 7,
    TROPICAL_CUDA_ERROR = 8,
    TROPICAL_INTERNAL_ERROR = 9
} tropical_status;

typedef enum tropical_semiring { TROPICAL_MAXPLUS = 0, TROPICAL_MINPLUS = 1, TROPICAL_MAXMUL = 2 } tropical_semiring;
typedef enum tropical_dtype { TROPICAL_F32 = 0, TROPICAL_F64 = 1, TROPICAL_I32 = 2, TROPICAL_I64 = 3 } tropical_dtype;
typedef enum tropical_layout { TROPICAL_ROW_MAJOR = 0, TROPICAL_COL_MAJOR = 1 } tropical_layout;

/* A matrix (or a batch of them) in device memory; sizes, leading dimension and batch stride in elements. */
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
} tropical_options;

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

/* grad_A from grad_C and argmax; b is read for MaxMul only (may be NULL otherwise). */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_backward_a(tropical_semiring semiring, tropical_dtype dtype,
                                                              const tropical_matrix* grad_c,
                                                              const tropical_matrix* argmax, const tropical_matrix* b,
                                                              const tropical_matrix* grad_a, int64_t batch,
                                                              const tropical_options* options);

/* grad_B from grad_C and argmax; a is read for MaxMul only (may be NULL otherwise). */
TROPICAL_GEMM_EXPORT tropical_status tropical_gemm_backward_b(tropical_semiring semiring, tropical_dtype dtype,
                                                              const tropical_matrix* grad_c,
                                                              const tropical_matrix* argmax, const tropical_matrix* a,
                                                              const tropical_matrix* grad_b, int64_t batch,
                                                              const tropical_options* options);

/* The message of the last failed call on this thread ("" if none). */
TROPICAL_GEMM_EXPORT const char* tropical_last_error_message(void);

/* A short name for a status ("invalid argument"). */
TROPICAL_GEMM_EXPORT const char* tropical_status_string(tropical_status status);

#ifdef __cplusplus
}
#endif

#endif /* TROPICAL_C_API_H */
