#!/bin/bash
# interesting.sh AND the file stays valid: clang prints no error before the crash (no ` error: `
# line at all, apart from the driver's final "clang frontend command failed").
F=GH85667.cpp
timeout 30 /usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -qE '^ *#4 0x[0-9a-f]+ clang::TemplateArgument::isPackExpansion' err.txt || exit 1
grep -q 'clang::Sema::collectUnexpandedParameterPacks' err.txt || exit 1
grep -v '^clang: error: clang frontend command failed' err.txt | grep -q ' error: ' && exit 1
exit 0
