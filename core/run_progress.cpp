#include "core/run_progress.hpp"

namespace cs {

RunProgress& run_progress()
{
  static RunProgress progress;
  return progress;
}

ProgressObserver::ProgressObserver(std::size_t tasks)
{
  run_progress().done = 0;
  run_progress().total = tasks;
}

ProgressObserver::~ProgressObserver() { run_progress().total = 0; }

ProgressStage::ProgressStage(const char* stage, std::size_t items)
{
  run_progress().stage_done = 0;
  run_progress().stage_total = items;
  run_progress().stage = stage;
}

ProgressStage::~ProgressStage() { run_progress().stage = nullptr; }

} // namespace cs
