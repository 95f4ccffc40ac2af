#!/bin/bash
# Interestingness test for GH67395 (clang-16 segfault on a default argument that folds a concept over a template parameter pack):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::Sema::ActOnParamDefaultArgument,
# and clang::Parser::ParseParameterDeclarationClause and clang::Parser::ParseFunctionDeclarator are in the stack.
F=big_gh67395.ii
timeout 60 /usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::Sema::ActOnParamDefaultArgument(' || exit 1
grep -qF 'clang::Parser::ParseParameterDeclarationClause' err.txt || exit 1
grep -qF 'clang::Parser::ParseFunctionDeclarator' err.txt || exit 1
exit 0
