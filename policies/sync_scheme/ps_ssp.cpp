// `ps-ssp`: stale-synchronous parameter server (Ho et al., NIPS'13): asynchronous pushes, but a worker may lead the
// slowest by at most `staleness` steps before it waits.
#include "policies/sync_scheme/parameter_server.hpp"

namespace cs {
namespace {

class PsSspScheme : public SyncScheme {
public:
  void configure(ObjectReader& r) override
  {
    r.field("staleness", staleness_, "s: the most steps a worker may lead the slowest");
    r.require(staleness_ >= 1, "staleness", "staleness must be at least 1 (0 is ps-bsp)");
    r.require_at_most("staleness", staleness_, 1 << 20);
  }
  void start(SyncWorld& world) override { start_parameter_server(world, staleness_); }

private:
  int staleness_ = 3;
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, PsSspScheme, "sync_scheme", "ps-ssp",
                   "parameter servers, stale-synchronous: a worker may lead the slowest by at most s steps");

} // namespace cs
