// The policies a scenario picks (`policies:`), per domain: a registered name, and the parameters given with it.
#pragma once

#include "base/registry.hpp"
#include "core/scenario_source.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cs {

/** One domain's choice: `sync: ring-allreduce` (short form) or `mapreduce: {name: capacity, node_locality_delay: 40}`.
 */
struct PolicyChoice {
  std::string name;
  YAML::Node params; // the map of the long form (its `name` included); undefined for the short form
};

class PolicySelection {
public:
  /** The scenario keys under `policies:`, one per domain. */
  static const std::vector<std::string>& domains();

  /** Reads `policies:`: every name must be registered in its domain and its parameters are read (and checked) by
   *  the policy itself. In describe mode, documents each domain and every registered policy's parameters. */
  void read(ObjectReader r);

  /** The name given for `domain`; when none was, `fallback`, or the domain's default (sync: ring-allreduce,
   *  mapreduce: capacity) when that is empty too. */
  std::string name(const std::string& domain, const std::string& fallback = "") const;
  /** Replaces `domain`'s choice with `name` without parameters (the planner's variants). */
  void set(const std::string& domain, const std::string& name);

  /** A configured instance of `domain`'s policy, `fallback` when none is named; parameters are read from the
   *  scenario (they were checked when it was loaded). Throws std::out_of_range for an unregistered name. */
  template <class Interface>
  std::unique_ptr<Interface> make(const std::string& domain, const ScenarioSource& source,
                                  const std::string& fallback = "") const
  {
    auto policy = Registry<Interface>::instance().create(name(domain, fallback));
    auto it = choices_.find(domain);
    ObjectReader r = source.reader(it == choices_.end() ? YAML::Node() : it->second.params, "policies." + domain);
    policy->configure(r);
    return policy;
  }

private:
  std::map<std::string, PolicyChoice> choices_;
};

} // namespace cs
