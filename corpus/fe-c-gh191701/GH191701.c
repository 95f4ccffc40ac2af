#define test(e, t) _Generic (e, default : 0, t : 1)

void GH191701(_Fract ci) {
  _BitInt(31) bi = 0;
  _Static_assert(test(ci + bi, _Complex int), "");
}
