struct A {
  int i;
  constexpr A() : i(0) {}
};
struct B {
  A a[ 305748893455492146];
};
extern const B b{};
