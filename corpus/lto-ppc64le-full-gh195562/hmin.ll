; Half-precision vector min test emitted by a frontend for ppc64le (gh-195562).
target datalayout = "e-m:e-Fn32-i64:64-i128:128-n32:64-S128-v256:256:256-v512:512:512"
target triple = "powerpc64le-unknown-linux-gnu"

declare half @llvm.vector.reduce.fmin.v4f16(<4 x half>)

define i16 @below_min(ptr %p, half %x) {
entry:
  %v = load <4 x half>, ptr %p, align 8
  %m = tail call half @llvm.vector.reduce.fmin.v4f16(<4 x half> %v)
  %c = fcmp ole half %m, %x
  %c.fr = freeze i1 %c
  br i1 %c.fr, label %yes, label %no

yes:
  ret i16 1

no:
  ret i16 0
}
