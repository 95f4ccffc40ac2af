#include <arm_sve.h>
svfloat32_t foo(float b, float c) {
  return svdupq_n_f32(b, b, b, c);
}
