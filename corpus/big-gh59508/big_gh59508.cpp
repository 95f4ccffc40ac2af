#include <coroutine>
#include <deque>
#include <functional>
#include <iostream>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace jobs {
struct Job {
  std::string name;
  int priority;
  std::function<int()> work;
};

class Scheduler {
public:
  void submit(Job j) {
    auto& q = queues_[j.priority];
    q.push_back(std::move(j));
  }
  std::optional<Job> next() {
    for (int p = 9; p >= 0; --p) {
      auto it = queues_.find(p);
      if (it == queues_.end() || it->second.empty()) continue;
      Job j = std::move(it->second.front());
      it->second.pop_front();
      return j;
    }
    return std::nullopt;
  }

private:
  std::unordered_map<int, std::deque<Job>> queues_;
};

inline std::vector<std::string> drain(Scheduler& s, std::list<int>& results) {
  std::vector<std::string> done;
  while (auto j = s.next()) {
    results.push_back(j->work());
    done.push_back(j->name);
  }
  return done;
}

inline int run_jobs() {
  Scheduler s;
  auto counter = std::make_shared<int>(0);
  s.submit({"low", 1, [counter] { return ++*counter; }});
  s.submit({"high", 8, [counter] { return *counter += 10; }});
  std::list<int> results;
  for (const auto& name : drain(s, results)) std::cout << name << '\n';
  return results.empty() ? 0 : results.back();
}
} // namespace jobs

// The code of the report stays at global scope: clang names the coroutine being split
// by its mangled name in the crash ("While splitting coroutine @_Z3funv"), and icepick's
// signature keeps that text, so a namespace would change the signature.
class task {
  public:
    using final_awaiter = std::suspend_always;
    struct promise_type {
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_always final_suspend() const noexcept { return {}; }
        task get_return_object() const noexcept { return task{}; }
        void unhandled_exception() const noexcept {};
        void return_void() const noexcept {}
    };
};

unsigned count = 0;

task fun() {
    while (count++ < 100) {
        co_await std::suspend_always{};
    }
}

int main_like() {
    fun();
    return jobs::run_jobs();
}
