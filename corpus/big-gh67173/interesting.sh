#!/bin/bash
# Interestingness test for GH67173 (clang-19 segfault deducing class template arguments from a designated initializer of an anonymous-union member):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::InitializationSequence::InitializeFrom,
# and clang::Sema::AddInitializerToDecl and clang::Parser::ParseDeclarationAfterDeclaratorAndAttributes are in the stack.
F=big_gh67173.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::InitializationSequence::InitializeFrom(' || exit 1
grep -qF 'clang::Sema::AddInitializerToDecl' err.txt || exit 1
grep -qF 'clang::Parser::ParseDeclarationAfterDeclaratorAndAttributes' err.txt || exit 1
exit 0
