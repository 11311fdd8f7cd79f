// `ps-bsp`: a parameter server that applies a step's update once every worker has pushed its gradient.
#include "policies/sync_scheme/parameter_server.hpp"

namespace cs {
namespace {

class PsBspScheme : public SyncScheme {
public:
  void configure(ObjectReader&) override {}
  void start(SyncWorld& world) override { start_parameter_server(world, 0); }
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, PsBspScheme, "sync_scheme", "ps-bsp",
                   "parameter servers, bulk-synchronous: each update waits for every worker's push");

} // namespace cs
