#!/bin/bash
# Interestingness test for GH199238 (clang-19 segfault in class template argument deduction through nested alias templates with an enable_if_t template parameter):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::TypeLoc::getLocalAlignmentForType,
# and clang::TypeLoc::getFullDataSizeForType and clang::TypeLocBuilder::pushTrivial are in the stack.
F=big_gh199238.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::TypeLoc::getLocalAlignmentForType(' || exit 1
grep -qF 'clang::TypeLoc::getFullDataSizeForType' err.txt || exit 1
grep -qF 'clang::TypeLocBuilder::pushTrivial' err.txt || exit 1
exit 0
