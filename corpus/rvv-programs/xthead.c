/* XTheadVector (0.7.1-style) encodings as raw `.word`s, the way
 * a hand-encoded vector probe does (docs/rvv.md §1.4): binutils without XTheadVector
 * support cannot assemble them, and objdump shows them as data. tests/e2e/inspect.rs checks
 * that `icepick inspect` finds them (objdump cannot decode them, so the test lists them) and
 * runs this under qemu-riscv64, which implements only RVV 1.0: with -cpu rv64,v=true the
 * ambiguous vsetvli executes and the 0.7.1 sign-extending load dies with SIGILL, as RVV 1.0
 * hardware would on a binary built for a C906/C920; with v=false the vsetvli already dies.
 * That models a dialect mismatch, not a real host fault. */
#include <stdio.h>

/* vsetvli t0, x0, zimm=0 (e8,m1 in both dialects: ambiguous), then th.vlb.v v1, (a0):
 * mop=100 sets bit 28, reserved (mew) in RVV 1.0: XTheadVector-only. */
__attribute__((noinline)) unsigned long thead_load(const unsigned char *src) {
    register unsigned long a0 __asm__("a0") = (unsigned long)src;
    register unsigned long t0 __asm__("t0");
    __asm__ volatile(".word 0x000072d7\n" : "=r"(t0) : "r"(a0) : "memory");
    __asm__ volatile(".word 0x12050087\n" : : "r"(a0) : "memory");
    return t0;
}

/* th.vsetvli t0, x0, e16, m1: 0.7.1 vtype 0x004 (vsew=001); vlmul=100 is reserved in RVV 1.0,
 * so XTheadVector-only. Never executed. */
__attribute__((noinline)) unsigned long thead_config16(void) {
    register unsigned long t0 __asm__("t0");
    __asm__ volatile(".word 0x004072d7\n" : "=r"(t0) : : "memory");
    return t0;
}

int main(int argc, char **argv) {
    (void)argv;
    unsigned char src[64];
    for (int i = 0; i < 64; i++)
        src[i] = (unsigned char)i;
    printf("xthead: running XTheadVector code\n");
    fflush(stdout);
    unsigned long vl = argc > 5 ? thead_config16() : thead_load(src);
    printf("xthead OK vl=%lu\n", vl);
    return 0;
}
