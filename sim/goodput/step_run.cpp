// One simulated training step for the long run, alone or beside an asynchronous checkpoint's background write
// (its load on the NICs).
#include "sim/goodput/goodput.hpp"

#include "sim/exec/isolated_run.hpp"
#include "sim/run/scenario_run.hpp"
#include "workloads/training/training_metrics.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

namespace cs {
namespace {

StepRun step_in_this_process(const Scenario& s, const std::function<void(PlatformSpec&)>& adjust_platform)
{
  RunOptions options;
  options.adjust_platform = adjust_platform;
  const RunResult r = run_scenario(s, options);
  StepRun step;
  step.iteration_s = r.metrics.at(metric::iteration_time_s);
  step.tokens_per_step = r.metrics.at(metric::tokens_per_s) * step.iteration_s;
  step.parameters = r.metrics.at(metric::parameter_count);
  step.makespan_s = r.metrics.at(metric::makespan_s);
  const auto busy = r.metrics.breakdown.find("busiest_nic_link_busy_s");
  if (busy != r.metrics.breakdown.end() && step.iteration_s > 0)
    step.nic_busy_fraction = std::min(1.0, busy->second / step.iteration_s);
  return step;
}

} // namespace

StepRun run_step(const Scenario& s, const std::function<void(PlatformSpec&)>& adjust_platform)
{
  if (s.backend != Backend::SIMGRID)
    return step_in_this_process(s, adjust_platform);
  // SimGrid's engine starts once per process: every step of the long run gets a child of its own.
  const std::string text = run_isolated([&] {
    const StepRun r = step_in_this_process(s, adjust_platform);
    return fmt::format("{:.17g} {:.17g} {:.17g} {:.17g} {:.17g}", r.iteration_s, r.tokens_per_step, r.parameters,
                       r.makespan_s, r.nic_busy_fraction);
  });
  StepRun r;
  std::istringstream in(text);
  in >> r.iteration_s >> r.tokens_per_step >> r.parameters >> r.makespan_s >> r.nic_busy_fraction;
  return r;
}

} // namespace cs
