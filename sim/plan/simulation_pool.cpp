#include "sim/plan/simulation_pool.hpp"

#include "core/common_metrics.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/run/scenario_run.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cs {

Scenario as_timed(Scenario s)
{
  s.backend = Backend::ANALYTICAL;
  auto w = std::make_shared<TrainingWorkload>(workload_as<TrainingWorkload>(s)); // its own, not the base's
  w->params.iterations = 2; // the steady state: the second iteration pays the first one's post-step gathers
  s.workload = w;
  return s;
}

Scenario timing_scenario(const Scenario& base, int gpus, const Plan& plan)
{
  return as_timed(plan_scenario(base, gpus, plan));
}

PlanTiming time_plan(const Scenario& base, int gpus, const Plan& plan)
{
  return time_scenario(timing_scenario(base, gpus, plan));
}

int default_plan_jobs() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8); }

RunResult run_timed(const Scenario& s)
{
  RunOptions fast;
  fast.replicas = ReplicaMode::ESTIMATE;
  return run_scenario(s, fast);
}

PlanTiming time_scenario(const Scenario& s)
{
  const RunResult r = run_timed(s);
  return {r.metrics.at(metric::iteration_time_s), r.metrics.at(metric::throughput_samples_per_s),
          r.metrics.at(metric::tflops_per_gpu)};
}

nlohmann::json plan_json(const Plan& plan)
{
  const ParallelLayout& p = plan.parallel;
  return {{"dp", p.dp},
          {"tp", p.tp},
          {"cp", p.cp},
          {"pp", p.pp},
          {"vpp", p.vpp},
          {"ep", p.ep},
          {"etp", p.etp},
          {"zero", p.zero},
          {"dp_replicate", p.dp_replicate},
          {"sp", p.sequence_parallel},
          {"cp_comm", static_cast<int>(p.cp_comm)},
          {"placement", static_cast<int>(p.placement)},
          {"micro", plan.micro},
          {"schedule", plan.schedule},
          {"recompute", static_cast<int>(plan.recompute)},
          {"fp8", plan.fp8},
          {"dispatcher", plan.dispatcher},
          {"modules", plan.recompute_modules},
          {"stage_layers", plan.stage_layers}};
}

Plan plan_from_json(const nlohmann::json& j)
{
  Plan plan;
  ParallelLayout& p = plan.parallel;
  p.dp = j.at("dp");
  p.tp = j.at("tp");
  p.cp = j.at("cp");
  p.pp = j.at("pp");
  p.vpp = j.at("vpp");
  p.ep = j.at("ep");
  p.etp = j.at("etp");
  p.zero = j.at("zero");
  p.dp_replicate = j.at("dp_replicate");
  p.sequence_parallel = j.at("sp");
  p.cp_comm = static_cast<CpComm>(j.at("cp_comm").get<int>());
  p.placement = static_cast<Placement>(j.at("placement").get<int>());
  plan.micro = j.at("micro");
  plan.schedule = j.at("schedule");
  plan.recompute = static_cast<Recompute>(j.at("recompute").get<int>());
  plan.fp8 = j.at("fp8");
  plan.dispatcher = j.at("dispatcher");
  plan.recompute_modules = j.at("modules").get<std::vector<std::string>>();
  plan.stage_layers = j.at("stage_layers").get<std::vector<int>>();
  return plan;
}

namespace {

// send() with MSG_NOSIGNAL: a worker that died answers EPIPE instead of killing this process with SIGPIPE.
bool write_line(int fd, const std::string& line)
{
  const std::string text = line + "\n";
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t w = send(fd, p, left, MSG_NOSIGNAL);
    if (w <= 0)
      return false;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return true;
}

// One line from `fd` (without its newline); false at the end of the stream before any byte.
bool read_line(int fd, std::string* line)
{
  line->clear();
  char c = 0;
  for (ssize_t r; (r = read(fd, &c, 1)) == 1;) {
    if (c == '\n')
      return true;
    line->push_back(c);
  }
  return !line->empty();
}

// A worker's life: a plan per line in, "ok <time> <samples/s> <TFLOP/s>" (hexadecimal floats: exact) or
// "error <message>" per line out, until its input ends.
[[noreturn]] void serve(const Scenario& base, int gpus, int in, int out)
{
  // Interrupted, a worker just ends: the planner it serves says so once, for all of them.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  for (std::string line; read_line(in, &line);) {
    std::string reply;
    try {
      const auto [t, samples, tflops] = time_plan(base, gpus, plan_from_json(nlohmann::json::parse(line)));
      reply = fmt::format("ok {:a} {:a} {:a}", t, samples, tflops);
    } catch (const std::exception& e) {
      reply = std::string("error ") + e.what();
      for (char& c : reply)
        c = c == '\n' ? ' ' : c;
    }
    if (!write_line(out, reply))
      _exit(3);
  }
  _exit(0);
}

} // namespace

SimulationPool::SimulationPool(const Scenario& base, int gpus, int workers) : base_(base), gpus_(gpus)
{
  for (int k = 0; workers > 1 && k < workers; ++k) {
    int fds[2]; // one socket pair a worker: plans one way, timings the other
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
      throw std::runtime_error("socketpair() failed");
    const pid_t pid = fork_with(fds);
    if (pid == 0) {
      for (const Child& c : children_) // the earlier workers' sockets are not this one's
        close(c.fd);
      close(fds[0]);
      serve(base, gpus, fds[1], fds[1]);
    }
    close(fds[1]);
    children_.push_back({pid, fds[0]});
  }
}

SimulationPool::~SimulationPool()
{
  for (const Child& c : children_)
    close(c.fd); // the worker's input ends, and it exits
  for (const Child& c : children_) {
    int status = 0;
    waitpid(c.pid, &status, 0);
  }
}

std::vector<pid_t> SimulationPool::worker_pids() const
{
  std::vector<pid_t> out;
  for (const Child& c : children_)
    out.push_back(c.pid);
  return out;
}

std::vector<PlanTiming> SimulationPool::time(const std::vector<Plan>& plans)
{
  start(plans);
  return collect();
}

void SimulationPool::start(const std::vector<Plan>& plans)
{
  if (static_cast<int>(plans.size()) > workers())
    throw std::logic_error("SimulationPool::start: more plans than workers");
  if (!pending_.empty())
    throw std::logic_error("SimulationPool::start: the last plans were not collected");
  pending_ = plans;
  for (std::size_t k = 0; k < plans.size() && !children_.empty(); ++k)
    if (!write_line(children_[k].fd, plan_json(plans[k]).dump()))
      throw std::runtime_error("a planner worker stopped taking plans");
}

std::vector<PlanTiming> SimulationPool::collect()
{
  const std::vector<Plan> plans = std::move(pending_);
  pending_.clear();
  std::vector<PlanTiming> out;
  if (children_.empty()) {
    for (const Plan& p : plans)
      out.push_back(time_plan(base_, gpus_, p));
    return out;
  }
  std::string error;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    std::string line;
    if (!read_line(children_[k].fd, &line)) {
      error = error.empty() ? "a planner worker died" : error;
      continue;
    }
    std::istringstream in(line);
    std::string word, a, b, c;
    in >> word;
    if (word != "ok") {
      error = error.empty() ? line.substr(std::min(line.size(), std::size_t{6})) : error;
      continue;
    }
    in >> a >> b >> c;
    out.emplace_back(std::strtod(a.c_str(), nullptr), std::strtod(b.c_str(), nullptr), std::strtod(c.c_str(), nullptr));
  }
  if (!error.empty())
    throw std::runtime_error(error);
  return out;
}

} // namespace cs
