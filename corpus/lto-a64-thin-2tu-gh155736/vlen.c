/* Vector-length query, compiled for a core without SVE (gh-155736). */
long sve_bytes(void) { return __builtin_vectorelements(__SVUint8_t); }
