// Name -> factory registries, one per policy domain, filled by self-registering policy files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** One registered policy, as `clustersim list policies` shows it. */
struct PolicyInfo {
  std::string domain; // scenario key under policies:, e.g. "sync"
  std::string name;   // e.g. "ring-allreduce"
  std::string description;
};

/** Every policy of every domain, sorted by (domain, name). */
std::vector<PolicyInfo> all_policies();
/** Records `info` for all_policies(); called by Registry::add. */
void record_policy(PolicyInfo info);

/** The registry of one domain. `Interface` is the domain's abstract policy class. */
template <class Interface> class Registry {
public:
  using Factory = std::function<std::unique_ptr<Interface>()>;

  static Registry& instance()
  {
    static Registry registry;
    return registry;
  }
  bool add(const std::string& domain, const std::string& name, const std::string& description, Factory factory)
  {
    factories_[name] = std::move(factory);
    record_policy(PolicyInfo{domain, name, description});
    return true;
  }
  bool has(const std::string& name) const { return factories_.count(name) > 0; }
  /** Throws std::out_of_range listing the valid names. */
  std::unique_ptr<Interface> create(const std::string& name) const
  {
    auto it = factories_.find(name);
    if (it == factories_.end()) {
      std::string valid;
      for (const auto& [n, f] : factories_)
        valid += (valid.empty() ? "" : ", ") + n;
      throw std::out_of_range("unknown policy '" + name + "' (expected one of: " + valid + ")");
    }
    return it->second();
  }
  std::vector<std::string> names() const
  {
    std::vector<std::string> out;
    for (const auto& [n, f] : factories_)
      out.push_back(n);
    return out;
  }

private:
  std::map<std::string, Factory> factories_;
};

/** Registers `Type` (default-constructible, implements `Interface`) at static-initialisation time. */
#define CS_REGISTER_POLICY(Interface, Type, domain, name, description)                                            \
  static const bool cs_registered_##Type = ::cs::Registry<Interface>::instance().add(                             \
      domain, name, description, [] { return std::unique_ptr<Interface>(new Type()); })

} // namespace cs
