/* tropical-gemm from C: one min-plus product through the C ABI (tropical/c_api.h).
 *
 * The C ABI computes on device memory and allocates none, so a C program brings its own: here from
 * the CUDA runtime (cudaMalloc, cudaMemcpy), which any CUDA toolkit has; the driver API's cuMemAlloc
 * works as well. Operands are described by tropical_matrix (pointer, shape, leading dimension,
 * layout, batch stride); every call returns a tropical_status and leaves a message for the thread.
 *
 *   c_api_min_plus     prints C = A (x) B in min-plus for a 2 x 3 and a 3 x 2 matrix, and checks it
 *
 * Exit status: 0 when the product is right, 1 when it is not or a call fails, 77 where there is no
 * usable GPU (the tests report that as skipped). */
#include <cuda_runtime.h>
#include <stdio.h>

#include <tropical/c_api.h>

#define SKIPPED 77

int main(void) {
    const float a[2 * 3] = {0, 2, 7, 3, 0, 1}; /* row-major 2 x 3 */
    const float b[3 * 2] = {0, 4, 1, 0, 5, 2}; /* row-major 3 x 2 */
    float expected[2 * 2], c[2 * 2];
    float *da = NULL, *db = NULL, *dc = NULL;
    int status = 1;

    if (cudaMalloc((void**)&da, sizeof a) != cudaSuccess || cudaMalloc((void**)&db, sizeof b) != cudaSuccess ||
        cudaMalloc((void**)&dc, sizeof c) != cudaSuccess) {
        printf("no usable CUDA GPU here (%s): nothing to run the product on\n", cudaGetErrorString(cudaGetLastError()));
        status = SKIPPED;
        goto done;
    }
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);

    {
        const tropical_matrix ma = {da, 2, 3, 3, TROPICAL_ROW_MAJOR, 0};
        const tropical_matrix mb = {db, 3, 2, 2, TROPICAL_ROW_MAJOR, 0};
        const tropical_matrix mc = {dc, 2, 2, 2, TROPICAL_ROW_MAJOR, 0};
        /* NULL options: the legacy default stream, no accumulation, the library finds the device. */
        const tropical_status s = tropical_gemm(TROPICAL_MINPLUS, TROPICAL_F32, &ma, &mb, &mc, 1, NULL);
        if (s != TROPICAL_SUCCESS) {
            printf("tropical_gemm failed (%s): %s\n", tropical_status_string(s), tropical_last_error_message());
            goto done;
        }
    }
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost); /* waits for the product */
    printf("C = [[%g, %g], [%g, %g]]\n", c[0], c[1], c[2], c[3]);
    /* The same product on the CPU: C[i,j] = min_k a[i,k] + b[k,j]. */
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            float best = a[i * 3] + b[j];
            for (int k = 1; k < 3; ++k)
                if (a[i * 3 + k] + b[k * 2 + j] < best) best = a[i * 3 + k] + b[k * 2 + j];
            expected[i * 2 + j] = best;
        }
    status = 0;
    for (int i = 0; i < 4; ++i)
        if (c[i] != expected[i]) status = 1;
    if (status)
        printf("wrong: the CPU gives [[%g, %g], [%g, %g]]\n", expected[0], expected[1], expected[2], expected[3]);
    else printf("right: the CPU gives the same\n");
done:
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return status;
}
