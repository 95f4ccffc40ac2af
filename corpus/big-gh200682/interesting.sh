#!/bin/bash
# Interestingness test for GH200682 (clang-16 segfault substituting a requires clause):
# frame #4 clang::ASTContext::getSubstTemplateTypeParmType, called from
# clang::Sema::SubstParmVarDecl under clang::Sema::SubstConstraintExpr.
F=big_gh200682.ii
timeout 30 /usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -qE '^ *#4 0x[0-9a-f]+ clang::ASTContext::getSubstTemplateTypeParmType' err.txt || exit 1
grep -q 'clang::Sema::SubstParmVarDecl' err.txt || exit 1
grep -q 'clang::Sema::SubstConstraintExpr' err.txt || exit 1
exit 0
