#!/bin/bash
# Interestingness test for GH45969 (clang-16 segfault instantiating a generic lambda whose fold expression captures each pack element):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::TemplateArgument::isPackExpansion,
# and clang::Sema::collectUnexpandedParameterPacks and clang::Sema::SubstStmt are in the stack.
F=big_gh45969.ii
timeout 60 /usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::TemplateArgument::isPackExpansion(' || exit 1
grep -qF 'clang::Sema::collectUnexpandedParameterPacks' err.txt || exit 1
grep -qF 'clang::Sema::SubstStmt' err.txt || exit 1
exit 0
