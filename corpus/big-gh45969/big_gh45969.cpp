#include <bitset>
#include <deque>
#include <iostream>
#include <iterator>
#include <list>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

namespace graph {
class Graph {
public:
  explicit Graph(std::size_t n) : adj_(n) {}
  void edge(std::size_t a, std::size_t b) {
    adj_[a].insert(b);
    adj_[b].insert(a);
  }
  std::list<std::size_t> bfs(std::size_t from) const {
    std::list<std::size_t> order;
    std::bitset<64> seen;
    std::deque<std::size_t> q{from};
    seen.set(from);
    while (!q.empty()) {
      auto v = q.front();
      q.pop_front();
      order.push_back(v);
      for (auto w : adj_[v])
        if (!seen.test(w)) { seen.set(w); q.push_back(w); }
    }
    return order;
  }
  std::size_t size() const { return adj_.size(); }

private:
  std::deque<std::set<std::size_t>> adj_;
};

inline std::unique_ptr<Graph> ring(std::size_t n) {
  auto g = std::make_unique<Graph>(n);
  for (std::size_t i = 0; i < n; ++i) g->edge(i, (i + 1) % n);
  return g;
}

inline std::string describe(const Graph& g, std::size_t from) {
  auto order = g.bfs(from);
  std::ostringstream os;
  std::copy(order.begin(), order.end(), std::ostream_iterator<std::size_t>(os, " "));
  auto [first, last] = std::make_tuple(order.front(), order.back());
  os << "| " << first << ".." << last << " sum " << std::accumulate(order.begin(), order.end(), std::size_t{0});
  return os.str();
}
} // namespace graph

namespace GH45969 {
template <class _Ty>
_Ty forward;

template <class _Callable>
void apply(_Callable) {
  forward<_Callable>();
}

template <typename...>
void f() {
  apply(
    [](auto... values) {
      ([values] {}, ...);
    });
}

inline int run() {
  f();
  auto g = graph::ring(8);
  std::cout << graph::describe(*g, 0) << '\n';
  return static_cast<int>(g->size());
}
} // namespace GH45969
