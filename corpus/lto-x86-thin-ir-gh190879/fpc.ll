; NaN/Inf classification emitted by a JIT-style code generator for plain x86-64 (gh-190879).
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare <8 x i1> @llvm.x86.avx512.fpclass.pd.512(<8 x double>, i32 immarg)

define i8 @classify(ptr %p) {
entry:
  %v = load <8 x double>, ptr %p, align 8
  %m = call <8 x i1> @llvm.x86.avx512.fpclass.pd.512(<8 x double> %v, i32 129)
  %b = bitcast <8 x i1> %m to i8
  ret i8 %b
}
