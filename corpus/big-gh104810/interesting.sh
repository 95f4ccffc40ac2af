#!/bin/bash
# Interestingness test for GH104810 (clang-19 -fopenmp segfault referencing a namespace-scope structured binding):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::SemaOpenMP::isOpenMPCapturedDecl,
# and clang::Sema::tryCaptureVariable and clang::Sema::MarkDeclRefReferenced are in the stack.
F=big_gh104810.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -fopenmp -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::SemaOpenMP::isOpenMPCapturedDecl(' || exit 1
grep -qF 'clang::Sema::tryCaptureVariable' err.txt || exit 1
grep -qF 'clang::Sema::MarkDeclRefReferenced' err.txt || exit 1
exit 0
