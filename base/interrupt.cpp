#include "base/interrupt.hpp"

#include <unistd.h>

namespace cs {
namespace {

extern "C" void on_interrupt(int signal)
{
  // Only async-signal-safe calls: outputs are written with these signals held, so nothing is half-written.
  static const char message[] = "clustersim: interrupted; nothing was written\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(128 + signal);
}

sigset_t interrupts()
{
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

} // namespace

void install_interrupt_handlers()
{
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

InterruptsHeld::InterruptsHeld()
{
  const sigset_t set = interrupts();
  sigprocmask(SIG_BLOCK, &set, &old_);
}

InterruptsHeld::~InterruptsHeld() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

} // namespace cs
