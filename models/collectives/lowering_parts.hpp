// The collective lowering's helpers: the input's streams by name, a spec as a request, what a task's successors wait
// for.
#pragma once

#include "core/task_graph.hpp"
#include "models/collectives/collective.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cs::lowering_parts {

// The input's communication streams by (prefix, host, channel), so that an expansion sends on the streams the
// builder placed the members on ("comm" is channel 0 of prefix "comm", "comm3" channel 3).
class ExistingStreams {
public:
  explicit ExistingStreams(const TaskGraph& g)
  {
    for (std::size_t s = 0; s < g.streams().size(); ++s)
      by_name_[{g.streams()[s].host, g.streams()[s].name}] = static_cast<int>(s);
  }
  StreamPool pool(TaskGraph& out, const std::string& prefix) const
  {
    StreamPool p(out, prefix);
    for (const auto& [key, stream] : by_name_) {
      const auto& [host, name] = key;
      if (name == prefix)
        p.adopt(host, 0, stream);
      else if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
               name.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
        p.adopt(host, std::stoi(name.substr(prefix.size())), stream);
    }
    return p;
  }

private:
  std::map<std::pair<int, std::string>, int> by_name_;
};

// An all-to-all-v's sizes with row i what rank i sends (a transposed spec's read back the other way).
inline std::vector<double> sizes_sent(const CollectiveSpec& c)
{
  if (!c.transposed)
    return c.matrix.values();
  const std::size_t n = c.hosts.size();
  std::vector<double> out(c.matrix.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      out[i * n + j] = c.matrix[j * n + i];
  return out;
}

inline CollectiveRequest request_of(const CollectiveSpec& c, const std::vector<int>& ready)
{
  CollectiveRequest req;
  req.kind = c.kind;
  req.algorithm = c.algorithm;
  req.hosts = c.hosts;
  req.bytes = c.bytes;
  req.root = c.root;
  req.matrix = sizes_sent(c);
  req.ready = ready;
  req.labels = c.labels;
  return req;
}

// What an input task's successors wait for in the lowered graph: one task, except for an expanded collective's
// member (its last transfers). One int for most, so that a million-task copy makes no allocation per task.
class DoneTasks {
public:
  std::size_t size() const { return one_ >= 0 ? 1 : many_.size(); }
  int front() const { return one_ >= 0 ? one_ : many_.at(0); }
  void set(int task)
  {
    one_ = task;
    many_.clear();
  }
  void set(std::vector<int> tasks)
  {
    one_ = tasks.size() == 1 ? tasks[0] : -1;
    many_ = tasks.size() == 1 ? std::vector<int>{} : std::move(tasks);
  }
  template <class F> void each(F&& f) const
  {
    if (one_ >= 0)
      f(one_);
    else
      for (int t : many_)
        f(t);
  }

private:
  int one_ = -1;
  std::vector<int> many_;
};

} // namespace cs::lowering_parts
