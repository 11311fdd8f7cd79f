#include "sim/plan/own_plan.hpp"

#include "base/registry.hpp"
#include "base/units.hpp"
#include "core/common_metrics.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/plan/plan_enumeration.hpp"
#include "sim/plan/search_bounds.hpp"
#include "sim/plan/simulation_pool.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <csignal>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
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
  // The model chunks a device holds, as the tree counts them: a schedule's own (DualPipe's two) over the scenario's
  // vpp.
  if (!plan.schedule.empty())
    plan.parallel.vpp = Registry<PipelineSchedule>::instance().create(plan.schedule)->chunks(plan.parallel.vpp);
  plan.recompute = w.model.recompute;
  plan.recompute_modules = w.model.recompute_modules;
  plan.fp8 = w.model.fp8 ? w.model.fp8->name() : "none";
  plan.dispatcher = w.model.moe.enabled() ? w.model.moe.dispatcher : "";
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

// A plan's choices one by one, as the report names them: what the tree's nearest plan differs in.
std::vector<std::pair<std::string, std::string>> plan_fields(const Plan& p)
{
  const ParallelLayout& l = p.parallel;
  const std::string modules = fmt::format("{}", fmt::join(p.recompute_modules, "+"));
  return {{"dp", std::to_string(l.dp)},
          {"tp", std::to_string(l.tp)},
          {"cp", std::to_string(l.cp)},
          {"pp", std::to_string(l.pp)},
          {"vpp", std::to_string(l.vpp)},
          {"ep", std::to_string(l.ep)},
          {"etp", std::to_string(l.expert_tp())},
          {"zero", std::to_string(l.zero)},
          {"dp_replicate", std::to_string(l.dp_replicate)},
          {"sequence_parallel", l.sequence_parallel ? "true" : "false"},
          {"cp_comm", cp_comm_name(l.cp_comm)},
          {"placement", placement_name(l.placement)},
          {"micro-batch", std::to_string(p.micro)},
          {"schedule", p.schedule.empty() ? "none" : p.schedule},
          {"recompute", recompute_name(p.recompute)},
          {"recompute_modules", modules.empty() ? "none" : modules},
          {"fp8", p.fp8},
          {"dispatcher", p.dispatcher.empty() ? "none" : p.dispatcher}};
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
  const auto own_fields = plan_fields(bare);
  std::string nearest; // the fields the tree's nearest plan differs in, with the own plan's and the tree's values
  std::size_t fewest = own_fields.size() + 1;
  for (Plan p : enumerate_plans(base, options.gpus, fp8, options.search_recompute_modules, options.search_placement,
                                options.dispatchers, options.search_hsdp)) {
    p.stage_layers.clear();
    if (plan_key(p, p.parallel.zero) == key) {
      own.searched = true;
      break;
    }
    const auto fields = plan_fields(p);
    std::vector<std::string> differ;
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].second != own_fields[i].second)
        differ.push_back(
            fmt::format("{} {} where the tree has {}", fields[i].first, own_fields[i].second, fields[i].second));
    if (differ.size() < fewest) {
      fewest = differ.size();
      nearest = fmt::format("{}", fmt::join(differ, ", "));
    }
  }
  if (!own.searched)
    own.outside = fmt::format("its plan ({}) is not in the planner's tree{}", layout_words(own.plan),
                              nearest.empty() ? "" : " (its nearest plan there: " + nearest + ")");
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
