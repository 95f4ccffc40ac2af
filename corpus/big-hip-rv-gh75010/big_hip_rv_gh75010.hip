// A HIP translation unit as the ROCm-on-RISC-V porting work builds it: rocPRIM device code
// (block and device primitives) beside host code that uses RVV intrinsics, compiled for a
// riscv64 host with -march=rv64gcv. The host helper below is the second snippet of
// llvm-project#75010; clang 19 crashes on it in declare-to-assign at -O1 -g.
#include <hip/hip_runtime.h>
#include <rocprim/rocprim.hpp>
#include <riscv_vector.h>

#include <cstring>
#include <vector>

template <unsigned BlockSize>
__global__ void block_sums(const int* in, int* out) {
  using reduce_t = rocprim::block_reduce<int, BlockSize>;
  __shared__ typename reduce_t::storage_type storage;
  int v = in[blockIdx.x * BlockSize + threadIdx.x];
  int sum;
  reduce_t().reduce(v, sum, storage);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

vint32m1_t copy_tail(vint32m1_t r, void* x) {
  std::memcpy(&r, x, 7);
  return r;
}

int launch(const std::vector<int>& host, int* d_in, int* d_out) {
  size_t bytes = host.size() * sizeof(int);
  if (hipMemcpy(d_in, host.data(), bytes, hipMemcpyHostToDevice) != hipSuccess) return -1;
  hipLaunchKernelGGL(block_sums<256>, dim3(host.size() / 256), dim3(256), 0, 0, d_in, d_out);
  size_t temp = 0;
  (void)rocprim::reduce(nullptr, temp, d_in, d_out, 0, host.size(), rocprim::plus<int>());
  return hipDeviceSynchronize() == hipSuccess ? 0 : -1;
}
