// Runs functions in forked child processes and returns their text results: one SimGrid engine per process, or runs
// side by side on several cores with nothing shared but what was there before the fork.
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cs {

/** Flushes stdio and forks; when the fork fails, closes both of `fds` (the pipe or socket pair made for the child)
 *  and throws std::runtime_error. Returns 0 in the child, the child's id in the parent. */
pid_t fork_with(int fds[2]);

/** Forks, runs `work` in the child, and returns the string it produced. A child that throws or crashes makes
 *  this throw std::runtime_error with the child's message (or its exit status). */
std::string run_isolated(const std::function<std::string()>& work);

/** Runs every `works[i]` in a child of its own, at most `jobs` at a time, and returns their strings in the order given.
 *  The first child that fails makes this throw as run_isolated does, once every child has ended. */
std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& works, int jobs);

} // namespace cs
