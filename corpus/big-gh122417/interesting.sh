#!/bin/bash
# Interestingness test for GH122417 (clang-19 segfault instantiating a fold over lambdas that name a pack element):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::Stmt::getSourceRange,
# and clang::Sema::SubstStmt and clang::Sema::InstantiateFunctionDefinition are in the stack.
F=big_gh122417.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::Stmt::getSourceRange(' || exit 1
grep -qF 'clang::Sema::SubstStmt' err.txt || exit 1
grep -qF 'clang::Sema::InstantiateFunctionDefinition' err.txt || exit 1
exit 0
