/* No vector code: scalar loops only (rv64gc, so GCC cannot vectorize them). tests/e2e/inspect.rs
 * checks that `icepick inspect` finds nothing in this program's own functions, that whatever
 * the static C library contributes agrees with objdump, and that it runs the same under
 * qemu-riscv64 with v=true and v=false. */
#include <stdio.h>

__attribute__((noinline)) unsigned long checksum(const unsigned char *p, unsigned long n) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

int main(void) {
    unsigned char buf[256];
    for (int i = 0; i < 256; i++)
        buf[i] = (unsigned char)(i * 7);
    printf("novec OK checksum=%lu\n", checksum(buf, sizeof buf));
    return 0;
}
