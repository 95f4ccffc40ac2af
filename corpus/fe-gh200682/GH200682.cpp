template <typename... Args> struct A {
  template <auto F> constexpr static bool B = F(42);
};
template <typename T>
concept c = true;
void f(auto &&...args)
  requires(
      A<decltype(args)...>::template B<[](auto x) { return c<decltype(x)>; }>);
int main() { f<int>(42); }
