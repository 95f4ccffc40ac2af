#include <algorithm>
#include <concepts>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace app {
struct Sample { std::string label; int id; double value; };

template <typename T>
concept Numeric = std::integral<T> || std::floating_point<T>;

template <Numeric T>
T clamp_sum(std::span<const T> xs, T lo, T hi) {
  return std::clamp(std::accumulate(xs.begin(), xs.end(), T{}), lo, hi);
}

inline std::map<std::string, std::vector<Sample>> by_label(const std::vector<Sample>& ss) {
  std::map<std::string, std::vector<Sample>> out;
  for (const auto& s : ss) out[s.label].push_back(s);
  return out;
}

inline std::vector<int> even_ids(const std::vector<Sample>& ss) {
  std::vector<int> out;
  for (const auto& s : ss)
    if (s.id % 2 == 0) out.push_back(s.id);
  std::sort(out.begin(), out.end());
  return out;
}

using Field = std::variant<int, double, std::string>;
inline std::string show(const Field& f) {
  return std::visit([](const auto& x) {
    std::ostringstream os;
    os << x;
    return os.str();
  }, f);
}

inline std::optional<double> mean(const std::vector<Sample>& ss) {
  if (ss.empty()) return std::nullopt;
  double t = 0;
  for (const auto& s : ss) t += s.value;
  return t / ss.size();
}

inline int run_app() {
  std::vector<Sample> ss{{"a", 1, 2.0}, {"b", 2, 3.5}, {"a", 4, 1.0}};
  auto groups = by_label(ss);
  auto ids = even_ids(ss);
  auto p = std::make_unique<Field>(std::string("x"));
  std::vector<int> xs{1, 2, 3};
  std::cout << groups.size() << ' ' << ids.size() << ' ' << show(*p) << ' '
            << mean(ss).value_or(0.0) << ' '
            << clamp_sum<int>(std::span<const int>(xs), 0, 10) << '\n';
  return 0;
}
} // namespace app

namespace GH200682 {
template <typename... Args> struct A {
  template <auto F> constexpr static bool B = F(42);
};
template <typename T>
concept c = true;
void f(auto &&...args)
  requires(
      A<decltype(args)...>::template B<[](auto x) { return c<decltype(x)>; }>);
inline int g() { f<int>(42); return app::run_app(); }
} // namespace GH200682
