typedef short v32hi __attribute__((vector_size(64)));
unsigned eqmask(const v32hi *a, const v32hi *b);
__attribute__((target("avx512bw,no-evex512")))
unsigned f(const v32hi *a, const v32hi *b) { return eqmask(a, b); }
