#include "sim/plan/own_plan.hpp"

#include "base/units.hpp"
#include "core/common_metrics.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/plan/plan_enumeration.hpp"
#include "sim/plan/search_bounds.hpp"
#include "sim/plan/simulation_pool.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <csignal>
#include <cstdio>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

namespace cs {

namespace {

Plan plan_of(const Scenario& s)
{
  const TrainingParams& w = workload_as<TrainingWorkload>(s).params;
  Plan plan;
  plan.parallel = w.parallel.layout(static_cast<long long>(s.cluster.nodes) * s.cluster.gpus_per_node);
  plan.micro = w.batch.micro;
  plan.schedule = w.parallel.pp > 1 ? s.policies.name("pipeline") : "";
  plan.recompute = w.model.recompute;
  plan.recompute_modules = w.model.recompute_modules;
  plan.fp8 = w.model.fp8 ? w.model.fp8->name() : "none";
  plan.stage_layers = w.parallel.stage_layers;
  return plan;
}

std::string layout_words(const Plan& p)
{
  std::string out = fmt::format("dp {} x tp {}", p.parallel.dp, p.parallel.tp);
  if (p.parallel.cp > 1)
    out += fmt::format(" x cp {}", p.parallel.cp);
  if (p.parallel.pp > 1)
    out += fmt::format(" x pp {} ({}{})", p.parallel.pp, p.schedule,
                       p.parallel.vpp > 1 ? fmt::format(", v {}", p.parallel.vpp) : "");
  if (p.parallel.ep > 1)
    out += fmt::format(", ep {}", p.parallel.ep);
  return out + fmt::format(", micro-batch {}", p.micro);
}

std::pair<double, double> time_own_run(const Scenario& base)
{
  const RunResult run = run_timed(as_timed(base));
  return {run.metrics.at(metric::iteration_time_s), run.metrics.at(metric::peak_memory_bytes)};
}

} // namespace

OwnPlanTiming::OwnPlanTiming(const Scenario& base) : base_(base)
{
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
    return; // result() runs it here
  try {
    pid_ = fork_with(fds);
  } catch (const std::runtime_error&) {
    return;
  }
  if (pid_ == 0) { // the child: the two figures back as hexadecimal floats (exact), nothing else
    close(fds[0]);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::string line = "error\n";
    try {
      const auto [t, bytes] = time_own_run(base);
      line = fmt::format("{:a} {:a}\n", t, bytes);
    } catch (const std::exception&) {
    }
    const ssize_t ignored = write(fds[1], line.data(), line.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  fd_ = fds[0];
}

OwnPlanTiming::~OwnPlanTiming()
{
  if (fd_ >= 0) { // never asked for (the search failed): no need to finish
    close(fd_);
    if (pid_ > 0)
      kill(pid_, SIGKILL);
  }
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::pair<double, double> OwnPlanTiming::result()
{
  std::string text;
  char buffer[256];
  for (ssize_t r; fd_ >= 0 && (r = read(fd_, buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(r));
  if (fd_ >= 0)
    close(fd_);
  fd_ = -1;
  double t = 0, bytes = 0;
  if (std::sscanf(text.c_str(), "%la %la", &t, &bytes) == 2)
    return {t, bytes};
  return time_own_run(base_); // no child, or it failed: the same run here, and its error if any
}

OwnPlan own_plan(const Scenario& base, const PlanOptions& options, double budget_bytes, OwnPlanTiming* timing)
{
  OwnPlan own;
  own.plan = plan_of(base);
  std::tie(own.iteration_s, own.memory_bytes) = timing ? timing->result() : time_own_run(base);
  // The tree's plans carry stages the planner chose: compare everything else.
  Plan bare = own.plan;
  bare.stage_layers.clear();
  const std::string key = plan_key(bare, bare.parallel.zero);
  std::vector<std::string> fp8 = options.fp8;
  if (fp8.empty())
    fp8.push_back(own.plan.fp8);
  for (Plan p : enumerate_plans(base, options.gpus, fp8, options.search_recompute_modules)) {
    p.stage_layers.clear();
    if (plan_key(p, p.parallel.zero) == key) {
      own.searched = true;
      break;
    }
  }
  if (!own.searched)
    own.outside = fmt::format("its plan ({}) is not in the planner's tree", layout_words(own.plan));
  else if (own.memory_bytes > budget_bytes)
    own.outside = fmt::format("it needs {} a GPU, over the planner's budget of {} (the memory reserve kept back)",
                              units::format_bytes(own.memory_bytes), units::format_bytes(budget_bytes));
  else if (!own.plan.stage_layers.empty())
    own.outside = "its stage_layers are its own, where the planner partitions the layers itself";
  return own;
}

std::string own_plan_line(const OwnPlan& own, const Plan& best)
{
  const std::string head =
      fmt::format("  the scenario's own plan ({}): {}", layout_words(own.plan), units::format_time(own.iteration_s));
  if (own.iteration_s >= best.iteration_s)
    return head + fmt::format(", {:.1f}% slower than the best\n", 100 * (own.iteration_s / best.iteration_s - 1));
  return head + fmt::format(", faster than the best plan found ({}): {}\n", units::format_time(best.iteration_s),
                            own.outside.empty() ? "it is in the tree and fits, so the bound, which is not strict "
                                                  "(planner.md), ruled it out"
                                                : own.outside);
}

} // namespace cs
