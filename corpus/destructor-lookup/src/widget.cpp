// icepick corpus: a qualified pseudo-destructor call through a namespace-qualified name that
// does not name the class (invalid code) sends clang 14-16 into a null dereference in
// destructor-name lookup (the bug class of llvm/llvm-project#59446, fixed in clang 17).
#include "registry.h"

namespace widgets {
namespace detail {
template <typename T> struct Holder;
}

int total(const plugins::Registry &r) { return plugins::count_slots(r) * WIDGET_SCALE; }

void release(Holder<double> *h) {
  h->detail::Holder<double>::~Holder();
}
} // namespace widgets
