// How a paired op's pass with fewer waits is spread over its partner's: shared by the task graph and the planner.
#pragma once

#include <cstddef>
#include <iterator>
#include <vector>

namespace cs {

/** Cuts the longest blocks (of two tasks or more) in two at the task nearest their middle in time until there are
 *  `count` of them, or no block has two tasks (interleave_pair: the pass with fewer waits spread over the other's
 *  waits). `seconds(task)` is a task's time; `inserted(at)` is told of each new block, placed at index `at`. */
template <class Task, class Seconds, class Inserted>
void split_longest_blocks(std::vector<std::vector<Task>>& blocks, std::size_t count, const Seconds& seconds,
                          const Inserted& inserted)
{
  auto total = [&seconds](const std::vector<Task>& b) {
    double t = 0;
    for (const Task& task : b)
      t += seconds(task);
    return t;
  };
  while (blocks.size() < count) {
    std::size_t longest = blocks.size();
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].size() >= 2 && (longest == blocks.size() || total(blocks[i]) > total(blocks[longest])))
        longest = i;
    if (longest == blocks.size())
      return;
    std::vector<Task>& b = blocks[longest];
    const double half = total(b) / 2;
    std::size_t cut = 1;
    double before = seconds(b[0]);
    while (cut + 1 < b.size() && before + seconds(b[cut]) / 2 < half)
      before += seconds(b[cut++]);
    std::vector<Task> tail(b.begin() + static_cast<std::ptrdiff_t>(cut), b.end());
    b.resize(cut);
    blocks.insert(blocks.begin() + static_cast<std::ptrdiff_t>(longest) + 1, std::move(tail));
    inserted(longest + 1);
  }
}

} // namespace cs
