// A serial loop shared with one forked child: two cores for the planner's bounding before its workers have plans.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cs {

/** Runs a loop over [0, n) on two cores: `here(i)` in this process for every other block of 512 indices, `there(i)`
 *  in a forked child for the others, whose lines come back by index. Where the fork fails, or the child dies before
 * answering an index, `here` runs it in this process: every index is done once, here or there. Returns the child's
 * lines by index (none for the indices done here). `there` must not write to shared state the parent reads: nothing
 * comes back but its lines. With `split` false, everything runs here. */
std::vector<std::optional<std::string>> split_loop(std::size_t n, bool split,
                                                   const std::function<void(std::size_t)>& here,
                                                   const std::function<std::string(std::size_t)>& there);

} // namespace cs
