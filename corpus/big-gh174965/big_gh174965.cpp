#include <vector>
#include <map>
#include <string>
#include <iostream>
#include <algorithm>
#include <memory>
#include <functional>
#include <unordered_map>
#include <variant>
#include <optional>
#include <tuple>
#include <numeric>

namespace app_util {
inline std::map<std::string, int> count_words(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const auto& w : words) ++counts[w];
  return counts;
}

inline void print_counts(const std::map<std::string, int>& counts) {
  for (const auto& [k, v] : counts) std::cout << k << ": " << v << '\n';
}

inline int total_length(const std::vector<std::string>& words) {
  return std::accumulate(words.begin(), words.end(), 0,
                         [](int acc, const std::string& s) { return acc + static_cast<int>(s.size()); });
}

struct Registry {
  std::unordered_map<std::string, std::function<int(int)>> handlers;
  std::optional<int> run(const std::string& name, int x) const {
    auto it = handlers.find(name);
    if (it == handlers.end()) return std::nullopt;
    return it->second(x);
  }
};

inline std::variant<int, std::string> describe(int v) {
  if (v % 2 == 0) return v / 2;
  return std::string("odd:") + std::to_string(v);
}

inline void demo() {
  std::vector<std::string> words{"alpha", "beta", "alpha", "gamma"};
  std::sort(words.begin(), words.end());
  auto counts = count_words(words);
  print_counts(counts);
  auto owner = std::make_unique<Registry>();
  owner->handlers["twice"] = [](int x) { return 2 * x; };
  auto t = std::make_tuple(total_length(words), owner->run("twice", 21).value_or(-1));
  std::cout << std::get<0>(t) + std::get<1>(t) << '\n';
  std::visit([](const auto& v) { std::cout << v << '\n'; }, describe(7));
}
} // namespace app_util

// ---- reported snippet ----
#include <iostream>
#include <stdarg.h>

template <int &T> void FuncTemplate() {
  std::cout << "Template instantiated with reference to int: " << T
            << std::endl;
}

template <typename... Ts> void outer_lambda(Ts &&...ts) {
    std::cout << std::endl;
}


int main() {
  auto outer = [](auto &&...args) {
    static int InternalVar = 43;
    FuncTemplate<InternalVar>();
  };

  auto deep_lambda = [outer](auto &&...args) {
    outer(args...);
  };

  deep_lambda(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);

  return 0;
}

int run_demo() { app_util::demo(); return 0; }
