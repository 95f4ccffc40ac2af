template <class>
struct A {};

template <class T>
constexpr auto f(T) {
    return [] (A<decltype([] (T) {})>) {};
}

int main() {
    f(0)({});
}
