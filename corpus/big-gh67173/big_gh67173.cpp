#include <array>
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace telemetry {
struct Sample {
  std::string sensor;
  std::chrono::milliseconds at{};
  double value = 0.0;
  std::optional<std::uint8_t> quality;
};

struct Window {
  std::chrono::milliseconds width{1000};
  std::size_t max_samples = 64;
};

inline std::vector<double> values_in(const std::vector<Sample>& ss, Window w) {
  std::vector<double> out;
  for (const auto& s : ss)
    if (s.at < w.width && out.size() < w.max_samples) out.push_back(s.value);
  return out;
}

inline void print(std::ostream& os, const std::vector<Sample>& ss) {
  std::set<std::string> sensors;
  for (const auto& s : ss) sensors.insert(s.sensor);
  for (const auto& name : sensors) os << std::setw(8) << name << '\n';
  std::array<double, 2> range{1e300, -1e300};
  for (const auto& s : ss) {
    range[0] = std::min(range[0], s.value);
    range[1] = std::max(range[1], s.value);
  }
  os << std::fixed << std::setprecision(2) << range[0] << ".." << range[1] << '\n';
}

inline double summarize() {
  using namespace std::chrono_literals;
  std::vector<Sample> ss{
      {.sensor = "temp", .at = 10ms, .value = 21.5, .quality = 3},
      {.sensor = "temp", .at = 900ms, .value = 22.0, .quality = 2},
      {.sensor = "hum", .at = 1500ms, .value = 40.0, .quality = std::nullopt},
  };
  auto vs = values_in(ss, {.width = 1s, .max_samples = 16});
  print(std::cout, ss);
  return std::accumulate(vs.begin(), vs.end(), 0.0) / static_cast<double>(vs.size());
}
} // namespace telemetry

namespace GH67173 {
// A 2-D point whose coordinate lives in an anonymous union member, built with
// a designated initializer and class template argument deduction.
template <class T>
struct Vec2d {
    union { T x; };
};

inline double f() {
    Vec2d v{.x = 1};
    return v.x + telemetry::summarize();
}
} // namespace GH67173
