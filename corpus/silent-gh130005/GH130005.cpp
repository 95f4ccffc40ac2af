int main() { [](auto... args) requires(([args] {}, ..., true)) {}(); }
