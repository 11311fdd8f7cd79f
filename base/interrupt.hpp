// SIGINT and SIGTERM end a run with one line and exit 130/143; output writing holds them off until it is done.
#pragma once

#include <csignal>

namespace cs {

/** Installs the handlers (again after anything that replaced them, such as a SimGrid engine's start-up). */
void install_interrupt_handlers();

/** Blocks SIGINT and SIGTERM for its lifetime; one that arrives meanwhile is delivered when it ends. */
class InterruptsHeld {
public:
  InterruptsHeld();
  ~InterruptsHeld();
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

private:
  sigset_t old_;
};

} // namespace cs
