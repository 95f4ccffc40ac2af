#!/bin/bash
# interesting.sh AND the file stays valid: clang prints no error before the crash
# (no ` error: ` line at all, apart from the driver's final "clang frontend command failed").
# The fair baseline for a reduction that must keep a crash-on-valid valid.
F=big_gh199238.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::TypeLoc::getLocalAlignmentForType(' || exit 1
grep -qF 'clang::TypeLoc::getFullDataSizeForType' err.txt || exit 1
grep -qF 'clang::TypeLocBuilder::pushTrivial' err.txt || exit 1
grep -v '^clang: error: clang frontend command failed' err.txt | grep -q ' error: ' && exit 1
exit 0
