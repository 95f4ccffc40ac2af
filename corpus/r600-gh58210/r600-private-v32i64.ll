define amdgpu_kernel void @f(ptr addrspace(1) %out, i64 %a) {
  %A = alloca <32 x i64>, addrspace(5)
  store <32 x i64> zeroinitializer, ptr addrspace(5) %A
  %p = getelementptr i64, ptr addrspace(5) %A, i64 %a
  %v = load i64, ptr addrspace(5) %p
  store i64 %v, ptr addrspace(1) %out
  ret void
}
