; ModuleID = 'GH68553.c'
source_filename = "GH68553.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@a = dso_local global i16 0, align 2
@b = dso_local global i16 0, align 2
@e = dso_local global i32 0, align 4
@i = dso_local global i8 0, align 1
@d = dso_local global i32 0, align 4
@f = dso_local global i8 0, align 1
@c = dso_local global [1 x i32] zeroinitializer, align 4

; Function Attrs: nounwind uwtable
define dso_local ptr @j() #0 {
  %1 = alloca ptr, align 8
  %2 = alloca i32, align 4
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  br label %5

5:                                                ; preds = %0
  store i16 0, ptr @a, align 2, !tbaa !5
  br label %6

6:                                                ; preds = %16, %5
  %7 = load i16, ptr @a, align 2, !tbaa !5
  %8 = sext i16 %7 to i32
  %9 = icmp sle i32 %8, 5
  br i1 %9, label %10, label %19

10:                                               ; preds = %6
  %11 = load i16, ptr @a, align 2, !tbaa !5
  %12 = sext i16 %11 to i32
  %13 = icmp eq i32 %12, 1
  br i1 %13, label %14, label %15

14:                                               ; preds = %10
  store ptr @a, ptr %1, align 8
  br label %113

15:                                               ; preds = %10
  br label %16

16:                                               ; preds = %15
  %17 = load i16, ptr @a, align 2, !tbaa !5
  %18 = add i16 %17, 1
  store i16 %18, ptr @a, align 2, !tbaa !5
  br label %6, !llvm.loop !9

19:                                               ; preds = %6
  br label %20

20:                                               ; preds = %19
  br label %21

21:                                               ; preds = %112, %20
  %22 = load i16, ptr @b, align 2, !tbaa !5
  %23 = icmp ne i16 %22, 0
  br i1 %23, label %24, label %113

24:                                               ; preds = %21
  store i32 0, ptr @e, align 4, !tbaa !11
  br label %25

25:                                               ; preds = %109, %24
  %26 = load i32, ptr @e, align 4, !tbaa !11
  %27 = icmp slt i32 %26, 6
  br i1 %27, label %28, label %112

28:                                               ; preds = %25
  store i8 0, ptr @i, align 1, !tbaa !13
  br label %29

29:                                               ; preds = %105, %28
  %30 = load i8, ptr @i, align 1, !tbaa !13
  %31 = sext i8 %30 to i32
  %32 = icmp sle i32 %31, 5
  br i1 %32, label %33, label %108

33:                                               ; preds = %29
  call void @llvm.lifetime.start.p0(i64 4, ptr %2) #2
  store i32 0, ptr %2, align 4, !tbaa !11
  br label %34

34:                                               ; preds = %101, %33
  %35 = load i32, ptr %2, align 4, !tbaa !11
  %36 = icmp slt i32 %35, 8
  br i1 %36, label %38, label %37

37:                                               ; preds = %34
  store i32 15, ptr %3, align 4
  call void @llvm.lifetime.end.p0(i64 4, ptr %2) #2
  br label %104

38:                                               ; preds = %34
  call void @llvm.lifetime.start.p0(i64 4, ptr %4) #2
  store i32 0, ptr %4, align 4, !tbaa !11
  br label %39

39:                                               ; preds = %97, %38
  %40 = load i32, ptr %4, align 4, !tbaa !11
  %41 = icmp slt i32 %40, 9
  br i1 %41, label %43, label %42

42:                                               ; preds = %39
  store i32 18, ptr %3, align 4
  call void @llvm.lifetime.end.p0(i64 4, ptr %4) #2
  br label %100

43:                                               ; preds = %39
  %44 = load i32, ptr @d, align 4, !tbaa !11
  %45 = sext i32 %44 to i64
  %46 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %45
  %47 = load i32, ptr %46, align 4, !tbaa !11
  %48 = and i32 %47, 5
  %49 = load i32, ptr @d, align 4, !tbaa !11
  %50 = load i8, ptr @f, align 1, !tbaa !13
  %51 = sext i8 %50 to i32
  %52 = xor i32 %49, %51
  %53 = sext i32 %52 to i64
  %54 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %53
  %55 = load i32, ptr %54, align 4, !tbaa !11
  %56 = xor i32 %48, %55
  store i32 %56, ptr @d, align 4, !tbaa !11
  %57 = load i32, ptr @d, align 4, !tbaa !11
  %58 = and i32 %57, 5
  %59 = load i32, ptr @d, align 4, !tbaa !11
  %60 = load i8, ptr @f, align 1, !tbaa !13
  %61 = sext i8 %60 to i32
  %62 = xor i32 %59, %61
  %63 = sext i32 %62 to i64
  %64 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %63
  %65 = load i32, ptr %64, align 4, !tbaa !11
  %66 = xor i32 %58, %65
  store i32 %66, ptr @d, align 4, !tbaa !11
  %67 = load i32, ptr @d, align 4, !tbaa !11
  %68 = and i32 %67, 5
  %69 = load i32, ptr @d, align 4, !tbaa !11
  %70 = load i8, ptr @f, align 1, !tbaa !13
  %71 = sext i8 %70 to i32
  %72 = xor i32 %69, %71
  %73 = sext i32 %72 to i64
  %74 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %73
  %75 = load i32, ptr %74, align 4, !tbaa !11
  %76 = xor i32 %68, %75
  store i32 %76, ptr @d, align 4, !tbaa !11
  %77 = load i32, ptr @d, align 4, !tbaa !11
  %78 = and i32 %77, 5
  %79 = load i32, ptr @d, align 4, !tbaa !11
  %80 = load i8, ptr @f, align 1, !tbaa !13
  %81 = sext i8 %80 to i32
  %82 = xor i32 %79, %81
  %83 = sext i32 %82 to i64
  %84 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %83
  %85 = load i32, ptr %84, align 4, !tbaa !11
  %86 = xor i32 %78, %85
  store i32 %86, ptr @d, align 4, !tbaa !11
  %87 = load i32, ptr @d, align 4, !tbaa !11
  %88 = and i32 %87, 5
  %89 = load i32, ptr @d, align 4, !tbaa !11
  %90 = load i8, ptr @f, align 1, !tbaa !13
  %91 = sext i8 %90 to i32
  %92 = xor i32 %89, %91
  %93 = sext i32 %92 to i64
  %94 = getelementptr inbounds [0 x i32], ptr @c, i64 0, i64 %93
  %95 = load i32, ptr %94, align 4, !tbaa !11
  %96 = xor i32 %88, %95
  store i32 %96, ptr @d, align 4, !tbaa !11
  br label %97

97:                                               ; preds = %43
  %98 = load i32, ptr %4, align 4, !tbaa !11
  %99 = add nsw i32 %98, 1
  store i32 %99, ptr %4, align 4, !tbaa !11
  br label %39, !llvm.loop !14

100:                                              ; preds = %42
  br label %101

101:                                              ; preds = %100
  %102 = load i32, ptr %2, align 4, !tbaa !11
  %103 = add nsw i32 %102, 1
  store i32 %103, ptr %2, align 4, !tbaa !11
  br label %34, !llvm.loop !15

104:                                              ; preds = %37
  br label %105

105:                                              ; preds = %104
  %106 = load i8, ptr @i, align 1, !tbaa !13
  %107 = add i8 %106, 1
  store i8 %107, ptr @i, align 1, !tbaa !13
  br label %29, !llvm.loop !16

108:                                              ; preds = %29
  br label %109

109:                                              ; preds = %108
  %110 = load i32, ptr @e, align 4, !tbaa !11
  %111 = add nsw i32 %110, 1
  store i32 %111, ptr @e, align 4, !tbaa !11
  br label %25, !llvm.loop !17

112:                                              ; preds = %25
  br label %21, !llvm.loop !18

113:                                              ; preds = %14, %21
  %114 = load ptr, ptr %1, align 8
  ret ptr %114
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

attributes #0 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #2 = { nounwind }

!llvm.module.flags = !{!0, !1, !2, !3}
!llvm.ident = !{!4}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"PIE Level", i32 2}
!3 = !{i32 7, !"uwtable", i32 2}
!4 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!5 = !{!6, !6, i64 0}
!6 = !{!"short", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = distinct !{!9, !10}
!10 = !{!"llvm.loop.mustprogress"}
!11 = !{!12, !12, i64 0}
!12 = !{!"int", !7, i64 0}
!13 = !{!7, !7, i64 0}
!14 = distinct !{!14, !10}
!15 = distinct !{!15, !10}
!16 = distinct !{!16, !10}
!17 = distinct !{!17, !10}
!18 = distinct !{!18, !10}
