#include "core/policy_selection.hpp"

#include <fmt/format.h>

namespace cs {

const std::vector<std::string>& PolicySelection::domains()
{
  static const std::vector<std::string> names{"pipeline",    "sync",      "sync_scheme", "moe",
                                              "moe_routing", "mapreduce", "spark_cache", "spark_provisioning",
                                              "cluster",     "placement"};
  return names;
}

namespace {

struct Domain {
  const char* help;
  const char* default_name; // what runs when the scenario names none ("" = the workload decides)
};

const Domain& domain_info(const std::string& domain)
{
  static const std::map<std::string, Domain> domains{
      {"pipeline", {"pipeline schedule (default: 1f1b, or interleaved-1f1b with vpp > 1)", ""}},
      {"sync", {"gradient synchronisation", "ring-allreduce"}},
      {"sync_scheme", {"sync-training: how replicas wait for and combine with each other", "allreduce"}},
      {"moe", {"MoE training: expert and sample placement, all-to-all and pipelining policy", "static-ep"}},
      {"moe_routing", {"MoE training: how tokens choose experts", "uniform"}},
      {"mapreduce", {"MapReduce task scheduler", "capacity"}},
      {"spark_cache", {"Spark cache layout (per executor or per-host pool) and its eviction", "vanilla"}},
      {"spark_provisioning", {"Spark executor provisioning", "static"}},
      {"cluster", {"gpu-jobs: which queued jobs start (queue order)", "fifo"}},
      {"placement", {"gpu-jobs: which GPUs a job's gang gets", "consolidated"}}};
  return domains.at(domain);
}

std::string names_of(const std::string& domain)
{
  std::string valid;
  for (const auto& p : all_policies())
    if (p.domain == domain)
      valid += (valid.empty() ? "" : ", ") + p.name;
  return valid;
}

} // namespace

void PolicySelection::read(ObjectReader r)
{
  for (const auto& domain : domains()) {
    const Domain& dom = domain_info(domain);
    const std::string help = std::string(dom.help) + " (clustersim list policies): a name, or {name: ..., and its "
                                                     "parameters}";
    auto node = r.raw(domain.c_str(), "name or map", help.c_str());
    if (r.describing() && *dom.default_name) // the domain's default, shown in the generated docs
      r.document_default(domain.c_str(), dom.default_name);
    if (r.describing()) { // each policy documents its own parameters under its domain
      for (const auto& p : all_policies())
        if (p.domain == domain) {
          std::vector<FieldDoc> docs;
          ObjectReader d(&docs, r.path_of(domain.c_str()));
          p.configure(d);
          for (auto& doc : docs) {
            doc.help = "[" + p.name + "] " + doc.help;
            r.document(doc);
          }
        }
      continue;
    }
    if (!node || node->IsNull())
      continue;
    PolicyChoice choice;
    ObjectReader params(YAML::Node(), nullptr, "");
    if (node->IsMap()) {
      params = r.child(domain.c_str(), "");
      params.required("name", choice.name, "");
      choice.params = *node;
    } else {
      r.field(domain.c_str(), choice.name, "");
    }
    const PolicyInfo* info = find_policy(domain, choice.name);
    if (!info) {
      const std::string valid = names_of(domain);
      const std::string message =
          valid.empty() ? fmt::format("no {} policies are implemented yet, so '{}' cannot be used", domain, choice.name)
                        : fmt::format("unknown {} policy '{}' (expected one of: {})", domain, choice.name, valid);
      if (node->IsMap())
        params.fail_at("name", message);
      r.fail_at(domain.c_str(), message);
    }
    if (node->IsMap()) {
      info->configure(params);
      params.finish();
    }
    choices_[domain] = std::move(choice);
  }
  r.finish();
}

std::string PolicySelection::name(const std::string& domain, const std::string& fallback) const
{
  auto it = choices_.find(domain);
  if (it != choices_.end() && !it->second.name.empty())
    return it->second.name;
  return fallback.empty() ? domain_info(domain).default_name : fallback;
}

void PolicySelection::set(const std::string& domain, const std::string& name) { choices_[domain] = {name, {}}; }

} // namespace cs
