template<int = 0>
void f() {
    []<int... Is>() {
        ([i = Is]{}, ...);
    }.template operator()<1,2,3>();
}

void f2() {
    f();
}
