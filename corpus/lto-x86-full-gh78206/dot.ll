; VNNI dot product emitted by a code generator for a plain x86-64 target (gh-78206).
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, <16 x i32>)

define void @dot(ptr %out, ptr %a, ptr %b, ptr %c) {
  %va = load <16 x i32>, ptr %a, align 4
  %vb = load <16 x i32>, ptr %b, align 4
  %vc = load <16 x i32>, ptr %c, align 4
  %r = tail call <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32> %va, <16 x i32> %vb, <16 x i32> %vc)
  store <16 x i32> %r, ptr %out, align 4
  ret void
}
