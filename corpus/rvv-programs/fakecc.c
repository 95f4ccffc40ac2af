/* A model of a compiler on a RISC-V host whose kernel advertises V for a vector unit of the
 * other dialect (a T-Head C920 with a vendor kernel, docs/rvv.md §1). No real
 * binary here shows that on demand, so tests/e2e/classify.rs builds this with
 * `riscv64-linux-gnu-gcc -O2 -static` and treats it as the crashing compiler; it is not a
 * real host fault, and the tests say so.
 *
 * It behaves enough like clang for `icepick capture`: `--version`, `-E` (copies the input),
 * `-o FILE`, other flags ignored, and on a fatal signal it prints LLVM's crash banner and a
 * stack dump in LLVM's `(module+0xoffset)` format (the faulting pc and its caller, read from
 * the signal context) before dying of the same signal, as clang's handler does.
 *
 * Two faults, chosen by the input:
 *  - Any input: when AT_HWCAP has V, the input is hashed by a "vectorised" routine written in
 *    XTheadVector (0.7.1) encodings. On an RVV 1.0 unit (qemu-riscv64 -cpu rv64,v=true) the
 *    0.7.1 sign-extending load th.vlb.v is reserved and dies with SIGILL: a dialect mismatch.
 *    With V off (v=false) HWCAP has no V and the scalar routine runs: no crash.
 *  - An input containing "#pragma fakecc crash": a null dereference in the "parser", with V
 *    on or off alike (a compiler bug that has nothing to do with the host). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <ucontext.h>
#include <unistd.h>

#define HWCAP_V (1UL << ('V' - 'A'))

static char **saved_argv;
static int saved_argc;

static void crash_handler(int sig, siginfo_t *info, void *ctx) {
    (void)info;
    ucontext_t *uc = ctx;
    unsigned long pc = uc->uc_mcontext.__gregs[REG_PC];
    unsigned long ra = uc->uc_mcontext.__gregs[REG_RA];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    /* A static non-PIE executable is loaded at its link addresses: offset == address. */
    fprintf(stderr,
            "PLEASE submit a bug report to https://example.invalid/fakecc and include the "
            "crash backtrace.\nStack dump:\n0.\tProgram arguments:");
    for (int i = 0; i < saved_argc; i++)
        fprintf(stderr, " %s", saved_argv[i]);
    fprintf(stderr, "\n1.\t<eof> parser at end of file\n");
    fprintf(stderr, " #0 0x%016lx (%s+0x%lx)\n", pc, exe, pc);
    fprintf(stderr, " #1 0x%016lx (%s+0x%lx)\n", ra, exe, ra);
    fflush(stderr);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* th.vsetvli t0, x0, e8,m1 (0x000072d7, the same bits in both dialects) and th.vlb.v v1, (a0)
 * (0x12050087: mop=100 sets bit 28, reserved in RVV 1.0). Raw words: binutils cannot
 * assemble XTheadVector. */
__attribute__((noinline)) unsigned long hash_xthead(const unsigned char *p, unsigned long n) {
    register unsigned long a0 __asm__("a0") = (unsigned long)p;
    register unsigned long t0 __asm__("t0");
    __asm__ volatile(".word 0x000072d7\n" : "=r"(t0) : "r"(a0) : "memory");
    __asm__ volatile(".word 0x12050087\n" : : "r"(a0) : "memory");
    return t0 + n;
}

__attribute__((noinline)) unsigned long hash_scalar(const unsigned char *p, unsigned long n) {
    unsigned long h = 5381;
    for (unsigned long i = 0; i < n; i++)
        h = h * 33 + p[i];
    return h;
}

struct decl {
    const char *name;
    struct decl *next;
};

/* The "parser bug": follows a list that the pragma left empty. */
__attribute__((noinline)) const char *parse_pragma(struct decl *d) {
    return d->next->name;
}

static char *read_file(const char *path, unsigned long *len) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fakecc: error: no such file or directory: '%s'\n", path);
        exit(1);
    }
    unsigned long cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    saved_argc = argc;
    saved_argv = argv;
    const char *input = NULL, *output = NULL;
    int preprocess = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("fakecc version 1.0.0 (a model of a compiler on a C920 host)\n"
                   "Target: riscv64-unknown-linux-gnu\n");
            return 0;
        } else if (strcmp(argv[i], "-E") == 0) {
            preprocess = 1;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            output = argv[++i];
        } else if ((strcmp(argv[i], "-x") == 0 || strcmp(argv[i], "-include") == 0) &&
                   i + 1 < argc) {
            i++;
        } else if (argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
            input = argv[i];
        }
    }
    if (!input) {
        fprintf(stderr, "fakecc: error: no input files\n");
        return 1;
    }
    unsigned long len;
    char *src = read_file(input, &len);
    FILE *out = output ? fopen(output, "wb") : stdout;
    if (!out) {
        fprintf(stderr, "fakecc: error: cannot open '%s'\n", output);
        return 1;
    }
    if (preprocess) {
        fwrite(src, 1, len, out);
        return 0;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);

    if (strstr(src, "#pragma fakecc crash")) {
        struct decl last = {"last", NULL};
        printf("%s\n", parse_pragma(&last));
    }
    unsigned long h = (getauxval(AT_HWCAP) & HWCAP_V) ? hash_xthead((unsigned char *)src, len)
                                                      : hash_scalar((unsigned char *)src, len);
    fprintf(out, "fakecc object of %s, hash %lu\n", input, h);
    return 0;
}
