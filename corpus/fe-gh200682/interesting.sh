#!/bin/bash
# Interestingness test for GH200682 (clang-19 segfault):
# frame #4 clang::Sema::SubstParmVarDecl, and clang::Sema::SubstConstraintExpr in the stack.
F=GH200682.cpp
timeout 30 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -qE '^ *#4 0x[0-9a-f]+ clang::Sema::SubstParmVarDecl' err.txt || exit 1
grep -q 'clang::Sema::SubstConstraintExpr' err.txt || exit 1
exit 0
