#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
// What the host side of a kernel launch needs from hip_runtime.h (none is used here).
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
__device__ __attribute__((noinline)) void complex_stack_operation(int n, float *out) {
    float local1[256];
    float local2[128];
    double local3[64];
    for (int i = 0; i < n && i < 64; i++) {
        local1[i] = (float)i * 1.5f;
        local2[i] = local1[i] * 0.5f;
        local3[i] = (double)local1[i] + (double)local2[i];
    }
    for (int i = 0; i < n && i < 32; i++) {
        ((double*)out)[i] = local3[i];
    }
}
__global__ void test_kernel(float *output) {
    complex_stack_operation(32, output);
}
