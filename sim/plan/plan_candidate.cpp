#include "sim/plan/plan_candidate.hpp"

#include "sim/plan/simulation_pool.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cs {

namespace {

std::string exact(double x) { return fmt::format("{:a}", x); }
double parsed(const nlohmann::json& j) { return std::strtod(j.get<std::string>().c_str(), nullptr); }

} // namespace

std::string candidate_line(const Candidate& c)
{
  const nlohmann::json j = {{"plan", plan_json(c.plan)},
                            {"bound", exact(c.plan.bound_s)},
                            {"memory", exact(c.plan.memory_bytes)},
                            {"experts", {exact(c.experts.forward), exact(c.experts.backward), exact(c.experts.weight)}},
                            {"model", c.experts.model},
                            {"microbatches", c.microbatches},
                            {"timeline", c.has_timeline},
                            {"recomputes_nothing", c.recomputes_nothing}};
  return j.dump();
}

Candidate candidate_from_line(const std::string& line)
{
  const nlohmann::json j = nlohmann::json::parse(line);
  Candidate c;
  c.plan = plan_from_json(j.at("plan"));
  c.plan.bound_s = parsed(j.at("bound"));
  c.plan.memory_bytes = parsed(j.at("memory"));
  const auto& e = j.at("experts");
  c.experts.forward = parsed(e.at(0));
  c.experts.backward = parsed(e.at(1));
  c.experts.weight = parsed(e.at(2));
  c.experts.model = j.at("model").get<std::string>();
  c.microbatches = j.at("microbatches");
  c.has_timeline = j.at("timeline");
  c.recomputes_nothing = j.at("recomputes_nothing");
  return c;
}

} // namespace cs
