#include "base/registry.hpp"

#include <algorithm>

namespace cs {
namespace {
std::vector<PolicyInfo>& catalog()
{
  static std::vector<PolicyInfo> policies;
  return policies;
}
} // namespace

bool record_policy(PolicyInfo info)
{
  catalog().push_back(std::move(info));
  return true;
}

std::vector<PolicyInfo> all_policies()
{
  auto out = catalog();
  std::sort(out.begin(), out.end(), [](const PolicyInfo& a, const PolicyInfo& b) {
    return a.domain != b.domain ? a.domain < b.domain : a.name < b.name;
  });
  return out;
}

const PolicyInfo* find_policy(const std::string& domain, const std::string& name)
{
  for (const auto& p : catalog())
    if (p.domain == domain && p.name == name)
      return &p;
  return nullptr;
}

} // namespace cs
