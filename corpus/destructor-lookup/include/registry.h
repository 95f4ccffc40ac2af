// A small header the demo needs, so that preprocessing has real work to do.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace plugins {
struct Entry {
  std::string name;
  std::vector<int> slots;
};
using Registry = std::map<std::string, Entry>;
inline int count_slots(const Registry &r) {
  int n = 0;
  for (const auto &kv : r) n += static_cast<int>(kv.second.slots.size());
  return n;
}
} // namespace plugins
