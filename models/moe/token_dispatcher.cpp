#include "models/moe/token_dispatcher.hpp"

#include <map>

namespace cs {

const TokenDispatcher& token_dispatcher(const std::string& name)
{
  // Every registered dispatcher, made once (registration is over before the first call).
  static const std::map<std::string, std::unique_ptr<TokenDispatcher>> dispatchers = [] {
    std::map<std::string, std::unique_ptr<TokenDispatcher>> out;
    const auto& registry = Registry<TokenDispatcher>::instance();
    for (const auto& n : registry.names())
      out.emplace(n, registry.create(n));
    return out;
  }();
  auto it = dispatchers.find(name);
  if (it == dispatchers.end())
    Registry<TokenDispatcher>::instance().create(name); // throws, listing the names
  return *it->second;
}

} // namespace cs
