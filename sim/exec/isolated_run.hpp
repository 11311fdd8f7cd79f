// Runs a function in a forked child process and returns its text result: one SimGrid engine per process.
#pragma once

#include <functional>
#include <string>

namespace cs {

/** Forks, runs `work` in the child, and returns the string it produced. A child that throws or crashes makes
 *  this throw std::runtime_error with the child's message (or its exit status). */
std::string run_isolated(const std::function<std::string()>& work);

} // namespace cs
