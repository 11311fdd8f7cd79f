#include "sim/cli/progress_reporter.hpp"

#include "base/read_progress.hpp"
#include "core/run_progress.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace cs {

ProgressReporter::ProgressReporter(std::string what, bool enabled) : what_(std::move(what))
{
  terminal_ = ::isatty(STDERR_FILENO) != 0;
  if (enabled)
    thread_ = std::thread([this] { watch(); });
}

ProgressReporter::~ProgressReporter()
{
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  if (printed_ && terminal_)
    std::fputs("\r\033[K", stderr); // clear the live line before the summary or an error
}

void ProgressReporter::watch()
{
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next = start + std::chrono::seconds(2); // runs shorter than this print nothing
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = clock::now();
    if (now < next)
      continue;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const std::size_t done = run_progress().done, total = run_progress().total;
    std::string line = fmt::format("{}: {:.0f} s", what_, elapsed);
    if (const char* stage = run_progress().stage)
      line += fmt::format(", {} {} of {}", stage, run_progress().stage_done.load(), run_progress().stage_total.load());
    if (total > 0 && done <= total) {
      const double share = double(done) / double(total);
      line += fmt::format(", simulating {:.0f}% of {} tasks", 100 * share, total);
      if (share > 0.02)
        line += fmt::format(", about {:.0f} s left", elapsed * (1 - share) / share);
    } else if (const std::size_t read = read_progress().items; read > 0) {
      line += fmt::format(", {} trace events read", read);
    }
    std::fputs(terminal_ ? ("\r\033[K" + line).c_str() : (line + "\n").c_str(), stderr);
    std::fflush(stderr);
    printed_ = true;
    next = now + (terminal_ ? std::chrono::milliseconds(500) : std::chrono::seconds(10));
  }
}

} // namespace cs
