#include "models/moe/token_dispatcher.hpp"

namespace cs {

const TokenDispatcher& token_dispatcher(const std::string& name) { return registered_instance<TokenDispatcher>(name); }

} // namespace cs
