// icepick corpus: a two-arch HIP device compile in which only the gfx1030 device job
// crashes. The crash is deliberate (`#pragma clang __debug crash`), so the test is
// deterministic on every clang; it fires in the preprocessor, which capture handles by
// preprocessing with -frewrite-includes (the pragma is kept as text, then fires on replay).
#define __global__ __attribute__((global))

__global__ void scale(float *x, float k) {
#if defined(__HIP_DEVICE_COMPILE__) && defined(__gfx1030__)
#pragma clang __debug crash
#endif
  x[0] *= k;
}
