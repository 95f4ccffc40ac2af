#!/bin/bash
# Interestingness test for GH85667 (clang-16 segfault):
# frame #4 clang::TemplateArgument::isPackExpansion, and clang::Sema::collectUnexpandedParameterPacks in the stack.
F=GH85667.cpp
timeout 30 /usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -qE '^ *#4 0x[0-9a-f]+ clang::TemplateArgument::isPackExpansion' err.txt || exit 1
grep -q 'clang::Sema::collectUnexpandedParameterPacks' err.txt || exit 1
exit 0
