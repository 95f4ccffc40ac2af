/* RVV 1.0 code in inline assembly under `.option arch, +v`, so it builds with a plain rv64gc
 * toolchain (riscv64-linux-gnu-gcc -O2 -static). tests/e2e/inspect.rs scans it with
 * `icepick inspect` and checks the counts against objdump, then runs it under qemu-riscv64:
 * with -cpu rv64,v=true it prints "rvv1 OK ...", with v=false it dies with SIGILL on the first
 * vector instruction. That models a host without usable RVV 1.0 (no V unit, or a kernel that
 * has not enabled V for the task); it is not a real host fault. */
#include <stdio.h>

/* RVV-1.0-only: vsetvli with ta,ma (the vma bit does not exist in 0.7.1). Ambiguous: the
 * unit-stride loads/store and vadd.vv. */
__attribute__((noinline)) unsigned long rvv1_add_bytes(unsigned char *dst, const unsigned char *a,
                                                       const unsigned char *b, unsigned long n) {
    unsigned long vl;
    __asm__ volatile(".option push\n.option arch, +v\n"
                     "vsetvli %0, %4, e8, m1, ta, ma\n"
                     "vle8.v v1, (%2)\n"
                     "vle8.v v2, (%3)\n"
                     "vadd.vv v3, v1, v2\n"
                     "vse8.v v3, (%1)\n"
                     ".option pop\n"
                     : "=&r"(vl)
                     : "r"(dst), "r"(a), "r"(b), "r"(n)
                     : "memory");
    return vl;
}

/* RVV-1.0-only: vsetivli, whole-register load/store, a mask load, an indexed-unordered load;
 * plus csrr vlenb (a vector CSR access, ambiguous). */
__attribute__((noinline)) unsigned long rvv1_whole_register(unsigned char *dst,
                                                            const unsigned char *src) {
    unsigned long vl, vlenb;
    __asm__ volatile(".option push\n.option arch, +v\n"
                     "vsetivli %0, 8, e8, m1, ta, ma\n"
                     "csrr %1, vlenb\n"
                     "vl1re8.v v4, (%3)\n"
                     "vs1r.v v4, (%2)\n"
                     "vlm.v v0, (%3)\n"
                     "vmv.v.i v8, 0\n"
                     "vluxei8.v v5, (%3), v8\n"
                     ".option pop\n"
                     : "=&r"(vl), "=&r"(vlenb)
                     : "r"(dst), "r"(src)
                     : "memory");
    return vl + vlenb;
}

int main(void) {
    unsigned char a[64], b[64], dst[64], whole[64];
    for (int i = 0; i < 64; i++) {
        a[i] = (unsigned char)i;
        b[i] = (unsigned char)(2 * i);
        dst[i] = whole[i] = 0;
    }
    printf("rvv1: running vector code\n");
    fflush(stdout);
    unsigned long vl = rvv1_add_bytes(dst, a, b, 64);
    unsigned long w = rvv1_whole_register(whole, a);
    printf("rvv1 OK vl=%lu dst[5]=%u whole=%lu\n", vl, dst[5], w);
    return dst[5] == 15 ? 0 : 1;
}
