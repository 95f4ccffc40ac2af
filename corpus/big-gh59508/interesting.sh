#!/bin/bash
# Interestingness test for GH59508 (clang-14 -O2 segfault in the coroutine splitting pass on a coroutine that awaits in a loop over a global counter):
# the first frame with a name, past llvm::sys's signal-handler frames (the first frame
# icepick's signature keeps), is llvm::CoroSplitPass::run,
# and llvm::PassManager<llvm::LazyCallGraph::SCC, llvm::AnalysisManager<llvm::LazyCallGraph::SCC, llvm::LazyCallGraph&>, llvm::LazyCallGraph&, llvm::CGSCCUpdateResult&>::run and llvm::DevirtSCCRepeatedPass::run are in the stack.
F=big_gh59508.ii
timeout 60 /usr/lib/llvm-14/bin/clang -fno-crash-diagnostics -std=c++20 -O2 -c -o /dev/null "$F" > err.txt 2>&1
grep -E '^ *#[0-9]+ 0x[0-9a-f]+ ([A-Za-z_]|\(anonymous)' err.txt | grep -v -E ' llvm::sys::|SignalHandler' | head -n 1 | grep -qF ' llvm::CoroSplitPass::run(' || exit 1
grep -qF 'llvm::PassManager<llvm::LazyCallGraph::SCC, llvm::AnalysisManager<llvm::LazyCallGraph::SCC, llvm::LazyCallGraph&>, llvm::LazyCallGraph&, llvm::CGSCCUpdateResult&>::run' err.txt || exit 1
grep -qF 'llvm::DevirtSCCRepeatedPass::run' err.txt || exit 1
exit 0
