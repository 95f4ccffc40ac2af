define x86_fp80 @test_llrint_f80(x86_fp80 %x) {
entry:
  ret x86_fp80 %x
}
