// `ps-asp`: a parameter server that applies each pushed gradient at once; no worker waits for another.
#include "policies/sync_scheme/parameter_server.hpp"

namespace cs {
namespace {

class PsAspScheme : public SyncScheme {
public:
  void configure(ObjectReader&) override {}
  void start(SyncWorld& world) override { start_parameter_server(world, -1); }
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, PsAspScheme, "sync_scheme", "ps-asp",
                   "parameter servers, asynchronous: each push is applied at once, no one waits");

} // namespace cs
