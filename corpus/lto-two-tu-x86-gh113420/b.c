typedef short v32hi __attribute__((vector_size(64)));
typedef _Bool v32b __attribute__((ext_vector_type(32)));
unsigned eqmask(const v32hi *a, const v32hi *b) {
  v32b m = __builtin_convertvector(*a == *b, v32b);
  unsigned r; __builtin_memcpy(&r, &m, 4); return r;
}
