#!/bin/bash
# Interestingness test for GH174965 (clang-19 segfault in IR generation of a generic lambda whose static local is a reference template argument):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is clang::CodeGen::CodeGenFunction::EmitReturnBlock,
# and clang::CodeGen::isAggregateTypeForABI and
# clang::CodeGen::CodeGenTypes::arrangeLLVMFunctionInfo are in the stack.
F=big_gh174965.ii
timeout 60 /usr/lib/llvm-19/bin/clang -fno-crash-diagnostics -std=c++20 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' clang::CodeGen::CodeGenFunction::EmitReturnBlock(' || exit 1
grep -qF 'clang::CodeGen::isAggregateTypeForABI' err.txt || exit 1
grep -qF 'clang::CodeGen::CodeGenTypes::arrangeLLVMFunctionInfo' err.txt || exit 1
exit 0
