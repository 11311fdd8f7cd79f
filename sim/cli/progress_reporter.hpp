// A progress line for runs longer than two seconds: a live line on a terminal, plain lines every 10 s otherwise.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace cs {

/** Watches run_progress() from a thread while it lives. Writes to stderr, so stdout stays the summary alone. */
class ProgressReporter {
public:
  explicit ProgressReporter(std::string what, bool enabled = true);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

private:
  void watch();
  std::string what_;
  std::atomic<bool> stop_{false};
  bool terminal_ = false;
  bool printed_ = false;
  std::thread thread_;
};

} // namespace cs
