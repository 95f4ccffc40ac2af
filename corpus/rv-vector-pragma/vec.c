// icepick corpus: a deliberate crash that fires only when the RISC-V vector extension is
// enabled (`__riscv_vector` is defined by -march=rv64gcv, not by rv64gc). Deterministic on
// every clang; used to test capture of cross compiles and, later, the -march bisection.
int dot(const int *a, const int *b, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
#if defined(__riscv_vector)
#pragma clang __debug crash
#endif
    s += a[i] * b[i];
  }
  return s;
}
