#include <algorithm>
#include <concepts>
#include <iostream>
#include <ranges>
#include <regex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace logscan {
struct Hit { std::string level; std::string text; };

inline std::vector<Hit> scan(const std::vector<std::string>& lines) {
  static const std::regex re(R"(^\[(\w+)\]\s+(.*)$)");
  std::vector<Hit> out;
  for (const auto& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, re)) out.push_back({m[1].str(), m[2].str()});
  }
  return out;
}

inline std::unordered_map<std::string, int> histogram(const std::vector<Hit>& hits) {
  std::unordered_map<std::string, int> h;
  for (const auto& hit : hits) ++h[hit.level];
  return h;
}

inline std::vector<std::string_view> errors_only(const std::vector<Hit>& hits) {
  auto v = hits | std::views::filter([](const Hit& h) { return h.level == "error"; })
                | std::views::transform([](const Hit& h) { return std::string_view(h.text); });
  std::vector<std::string_view> out(v.begin(), v.end());
  std::ranges::sort(out);
  return out;
}

template <typename T>
  requires std::is_arithmetic_v<T>
T clamp_count(T n, T hi) { return std::min(n, hi); }

inline int summarize(const std::vector<std::string>& lines) {
  auto hits = scan(lines);
  auto h = histogram(hits);
  for (auto sv : errors_only(hits)) std::cout << sv << '\n';
  return clamp_count(static_cast<int>(h.size()), 10);
}
} // namespace logscan

// The code of the report stays at global scope: inside a namespace, clang's crash
// context would add "parsing namespace '...'" and icepick's signature, which keeps
// that phase, would differ from the small reproducer's.

// A default argument that says whether every type of the pack is integral.
template <typename... T>
int f1(bool B = (std::integral<T> ||...)) {
  return B ? 1 : 0;
}

inline int run_gh67395() {
  return f1<int, long>() + logscan::summarize({"[info] start", "[error] disk full", "[error] retry"});
}
