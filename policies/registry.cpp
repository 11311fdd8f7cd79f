#include "policies/registry.hpp"

#include <algorithm>

namespace cs {
namespace {
std::vector<PolicyInfo>& catalog()
{
  static std::vector<PolicyInfo> policies;
  return policies;
}
} // namespace

void record_policy(PolicyInfo info) { catalog().push_back(std::move(info)); }

std::vector<PolicyInfo> all_policies()
{
  auto out = catalog();
  std::sort(out.begin(), out.end(), [](const PolicyInfo& a, const PolicyInfo& b) {
    return a.domain != b.domain ? a.domain < b.domain : a.name < b.name;
  });
  return out;
}

} // namespace cs
