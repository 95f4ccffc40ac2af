int a, d;
extern short b[];
long c;
void e(bool f[]) {
#pragma clang loop vectorize_predicate(enable)
  for (signed char g = 1; g < (char)d; g += 3) {
    a = f[g] ? c : 0;
    b[g] = 0;
  }
}
