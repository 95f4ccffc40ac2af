#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace features {
struct Stats { double mean; double stddev; std::size_t n; };

inline Stats describe(const std::vector<double>& xs) {
  if (xs.empty()) return {0.0, 0.0, 0};
  double sum = 0.0;
#pragma omp parallel for reduction(+ : sum)
  for (std::size_t i = 0; i < xs.size(); ++i) sum += xs[i];
  const double mean = sum / static_cast<double>(xs.size());
  double sq = 0.0;
#pragma omp parallel for reduction(+ : sq)
  for (std::size_t i = 0; i < xs.size(); ++i) sq += (xs[i] - mean) * (xs[i] - mean);
  return {mean, std::sqrt(sq / static_cast<double>(xs.size())), xs.size()};
}

inline std::vector<double> synthetic(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> out(n);
  std::generate(out.begin(), out.end(), [&] { return dist(gen); });
  return out;
}

inline std::map<std::string, Stats> profile(const std::map<std::string, std::vector<double>>& cols) {
  std::map<std::string, Stats> out;
  for (const auto& [name, xs] : cols) out.emplace(name, describe(xs));
  return out;
}

inline int report() {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::vector<double>> cols{{"a", synthetic(1000, 1)}, {"b", synthetic(500, 2)}};
  auto prof = profile(cols);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - t0);
  for (const auto& [name, s] : prof)
    std::cout << name << ' ' << s.n << ' ' << s.mean << ' ' << s.stddev << '\n';
  std::cout << ms.count() << " ms\n";
  return static_cast<int>(std::accumulate(prof.begin(), prof.end(), std::size_t{0},
      [](std::size_t acc, const auto& kv) { return acc + kv.second.n; }));
}
} // namespace features

namespace GH104810 {
// A model's configuration comes as a pair (feature-vector id, mask-map id),
// unpacked once at namespace scope.
extern std::pair<int, int> samplePrematchFeatureVectorWithMaskMap0;

auto [PrematchFeatureVector, featureMaskMap] = samplePrematchFeatureVectorWithMaskMap0;

inline int fixedMTMLModel() {
  return featureMaskMap + features::report();
}
} // namespace GH104810
