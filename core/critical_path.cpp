#include "core/critical_path.hpp"

#include <algorithm>

namespace cs {

std::vector<int> critical_path(const TaskGraph& g, const Timeline& tl)
{
  const int n = static_cast<int>(g.size());
  if (n == 0)
    return {};
  // Predecessors are not stored; rebuild them once from the successor lists and the stream order.
  std::vector<std::vector<int>> preds(n);
  for (int t = 0; t < n; ++t) {
    auto [begin, end] = g.successors(t);
    for (const int* s = begin; s != end; ++s)
      preds[*s].push_back(t);
  }
  for (std::size_t s = 0; s < g.streams().size(); ++s) {
    const auto& st = g.stream_tasks(static_cast<int>(s));
    for (std::size_t i = 1; i < st.size(); ++i)
      preds[st[i]].push_back(st[i - 1]);
  }
  int current = 0;
  for (int t = 1; t < n; ++t)
    if (tl.end[t] > tl.end[current])
      current = t;
  std::vector<int> path{current};
  while (!preds[current].empty()) {
    int best = *std::max_element(preds[current].begin(), preds[current].end(), [&](int a, int b) {
      return tl.end[a] < tl.end[b] || (tl.end[a] == tl.end[b] && a > b);
    });
    current = best;
    path.push_back(current);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

} // namespace cs
