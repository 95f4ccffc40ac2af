# 1 "<built-in>"
# 1 "kernel.hip"
// icepick corpus: a two-arch HIP device compile in which only the gfx1030 device job
// crashes. The crash is deliberate (`#pragma clang __debug crash`), so the test is
// deterministic on every clang; it fires in the preprocessor, which capture handles by
// preprocessing with -frewrite-includes (the pragma is kept as text, then fires on replay).
#define __global__ __attribute__((global))

__global__ void scale(float *x, float k) {
#if 0 /* disabled by -frewrite-includes */
#if defined(__HIP_DEVICE_COMPILE__) && defined(__gfx1030__)
#endif
#endif /* disabled by -frewrite-includes */
#if 1 /* evaluated by -frewrite-includes */
# 9 "kernel.hip"
#pragma clang __debug crash
#endif
# 11 "kernel.hip"
  x[0] *= k;
}
