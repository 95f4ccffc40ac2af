/* Rounding helper built for an x87-less i386 target (gh-181265). */
long long to_ll(double x) { return __builtin_llrint(x); }
long long twice(double x) { return to_ll(x) * 2; }
