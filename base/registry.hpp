// Name -> factory registries (one per interface), filled at static-initialisation time by self-registering files.
#pragma once

#include "base/yaml_reader.hpp"

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** A component that reads its own parameters, the gem5 way: `configure` declares and reads each key (or, on a
 *  describing reader, documents it). The default has none. */
class Configurable {
public:
  virtual ~Configurable() = default;
  virtual void configure(ObjectReader& params) { (void)params; }
};

/** One registered policy, as `clustersim list policies` shows it. `describe` declares its parameters on a reader
 *  (documenting them, or reading and checking a given map). */
struct PolicyInfo {
  std::string domain; // scenario key under policies:, e.g. "sync"
  std::string name;   // e.g. "ring-allreduce"
  std::string description;
  std::function<void(ObjectReader&)> configure;
};

/** Every policy of every domain, sorted by (domain, name). */
std::vector<PolicyInfo> all_policies();
/** The policy `name` of `domain`, or nullptr. */
const PolicyInfo* find_policy(const std::string& domain, const std::string& name);
/** Records `info` for all_policies(); called by CS_REGISTER_POLICY. */
bool record_policy(PolicyInfo info);

/** The registry of one interface. */
template <class Interface> class Registry {
public:
  using Factory = std::function<std::unique_ptr<Interface>()>;

  static Registry& instance()
  {
    static Registry registry;
    return registry;
  }
  bool add(const std::string& name, const std::string& description, Factory factory)
  {
    factories_[name] = Entry{description, std::move(factory)};
    return true;
  }
  bool has(const std::string& name) const { return factories_.count(name) > 0; }
  /** Throws std::out_of_range listing the valid names. */
  std::unique_ptr<Interface> create(const std::string& name) const
  {
    auto it = factories_.find(name);
    if (it == factories_.end())
      throw std::out_of_range("unknown name '" + name + "' (expected one of: " + joined_names() + ")");
    return it->second.factory();
  }
  std::vector<std::string> names() const
  {
    std::vector<std::string> out;
    for (const auto& [n, e] : factories_)
      out.push_back(n);
    return out;
  }
  std::string description(const std::string& name) const { return factories_.at(name).description; }
  std::string joined_names() const
  {
    std::string valid;
    for (const auto& [n, e] : factories_)
      valid += (valid.empty() ? "" : ", ") + n;
    return valid;
  }

private:
  struct Entry {
    std::string description;
    Factory factory;
  };
  std::map<std::string, Entry> factories_;
};

/** The instance registered as `name` for a stateless `Interface` (a kind, not a configured policy): every registered
 *  one is made once, on the first call, after static initialisation. Throws std::out_of_range listing the names. */
template <class Interface> const Interface& registered_instance(const std::string& name)
{
  static const std::map<std::string, std::unique_ptr<Interface>> made = [] {
    std::map<std::string, std::unique_ptr<Interface>> out;
    const auto& registry = Registry<Interface>::instance();
    for (const auto& n : registry.names())
      out.emplace(n, registry.create(n));
    return out;
  }();
  auto it = made.find(name);
  if (it == made.end())
    Registry<Interface>::instance().create(name); // throws, listing the names
  return *it->second;
}

/** Registers `Type` (default-constructible, implements `Interface`, which derives from Configurable) as policy
 *  `name` of `domain` at static-initialisation time. */
#define CS_REGISTER_POLICY(Interface, Type, domain, name, description)                                                 \
  static const bool cs_registered_##Type = ::cs::Registry<Interface>::instance().add(name, description, [] {           \
    return std::unique_ptr<Interface>(new Type());                                                                     \
  }) && ::cs::record_policy(::cs::PolicyInfo{domain, name, description, [](::cs::ObjectReader& r) {                    \
                                               Type policy;                                                            \
                                               policy.configure(r);                                                    \
                                             }})

} // namespace cs
