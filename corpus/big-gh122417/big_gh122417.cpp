#include <algorithm>
#include <array>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace rpc {
struct Ping { int seq; };
struct Get { std::string key; };
struct Put { std::string key; std::string value; };
using Request = std::variant<Ping, Get, Put>;

class Store {
public:
  std::string handle(const Request& r) {
    return std::visit([this](const auto& q) { return apply(q); }, r);
  }
  std::size_t size() const { return data_.size(); }

private:
  std::string apply(const Ping& p) { return "pong " + std::to_string(p.seq); }
  std::string apply(const Get& g) {
    auto it = data_.find(g.key);
    return it == data_.end() ? std::string("<none>") : it->second;
  }
  std::string apply(const Put& p) {
    data_[p.key] = p.value;
    return "ok";
  }
  std::map<std::string, std::string> data_;
};

inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::istringstream is(line);
  for (std::string word; std::getline(is, word, sep);)
    if (!word.empty()) out.push_back(word);
  return out;
}

inline std::tuple<bool, Request> parse(const std::string& line) {
  auto words = split(line, ' ');
  if (words.empty()) return {false, Ping{0}};
  if (words[0] == "get" && words.size() == 2) return {true, Get{words[1]}};
  if (words[0] == "put" && words.size() == 3) return {true, Put{words[1], words[2]}};
  return {true, Ping{static_cast<int>(words.size())}};
}

inline int serve(const std::vector<std::string>& script) {
  Store store;
  std::array<int, 3> kinds{};
  std::vector<std::function<void(const std::string&)>> sinks{
      [](const std::string& s) { std::cout << s << '\n'; }};
  for (const auto& line : script) {
    auto [ok, req] = parse(line);
    if (!ok) continue;
    ++kinds[req.index()];
    auto reply = store.handle(req);
    std::for_each(sinks.begin(), sinks.end(), [&](auto& f) { f(reply); });
  }
  return static_cast<int>(store.size()) + *std::max_element(kinds.begin(), kinds.end());
}
} // namespace rpc

namespace GH122417 {
// Walks the alternatives of a request variant at compile time, one lambda per
// alternative, as a dispatcher table generator would.
template <class V>
void parseRequestVariant()
{
  []<std::size_t... index>(std::index_sequence<index...>) -> void {
    (
      [] {
        using T = std::variant_alternative_t<index, V>;
      },
      ...);
  }(std::make_index_sequence<std::variant_size_v<V>>{});
}

inline int run()
{
  parseRequestVariant<rpc::Request>();
  return rpc::serve({"put a 1", "get a", "ping"});
}
} // namespace GH122417
