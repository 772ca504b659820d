/* Calls the C ABI as a C program does: enum arguments are plain ints there, and any int may arrive
 * (a C caller, ctypes), so the fuzzer passes them through C, where that is well defined. */
#include <tropical/c_api.h>

int tropical_fuzz_call_c_abi(int operation, int semiring, int dtype, const tropical_matrix* a, const tropical_matrix* b,
                             const tropical_matrix* c, const tropical_matrix* argmax, const tropical_matrix* grad,
                             int64_t batch, const tropical_options* options) {
    const tropical_semiring s = (tropical_semiring)semiring;
    const tropical_dtype t = (tropical_dtype)dtype;
    switch (operation) {
    case 0: return tropical_gemm(s, t, a, b, c, batch, options);
    case 1: return tropical_gemm_argmax(s, t, a, b, c, argmax, batch, options);
    case 2: return tropical_gemm_backward_a(s, t, c, argmax, a, b, grad, batch, options);
    case 3: return tropical_gemm_backward_b(s, t, c, argmax, a, b, grad, batch, options);
    default: return tropical_backtrack(argmax, batch, a, c, options); /* the last states as a, the paths as c */
    }
}

const char* tropical_fuzz_status_string(int status) { return tropical_status_string((tropical_status)status); }
