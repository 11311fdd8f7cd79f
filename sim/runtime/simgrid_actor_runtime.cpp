#include "sim/runtime/simgrid_actor_runtime.hpp"

#include "sim/runtime/simgrid_actors.hpp"

#include <cmath>

namespace cs {
namespace s4u = simgrid::s4u;

namespace {

struct SgActivity final : SimActivity {
  explicit SgActivity(s4u::ActivityPtr a) : activity(std::move(a)) {}
  s4u::ActivityPtr activity;
};

class SimgridActorRuntime final : public SimgridActorsBase {
public:
  using SimgridActorsBase::SimgridActorsBase;

  bool has_disk(int host) const override { return disks_.at(host) != nullptr; }
  ActivityPtr disk_async(int host, double bytes, bool write) override
  {
    auto* d = disks_.at(host);
    const auto size = static_cast<sg_size_t>(std::llround(bytes));
    return std::make_shared<SgActivity>(write ? s4u::ActivityPtr(d->write_async(size))
                                              : s4u::ActivityPtr(d->read_async(size)));
  }
  ActivityPtr flow_async(int src, int dst, double bytes) override
  {
    return std::make_shared<SgActivity>(
        s4u::Comm::sendto_async(sg_.hosts[src], sg_.hosts[dst], static_cast<uint64_t>(std::llround(bytes))));
  }
  void wait(const ActivityPtr& activity) override { static_cast<SgActivity&>(*activity).activity->wait(); }
  std::size_t wait_any(const std::vector<ActivityPtr>& activities) override
  {
    std::vector<s4u::ActivityPtr> raw;
    raw.reserve(activities.size());
    for (const auto& a : activities)
      raw.push_back(static_cast<SgActivity&>(*a).activity);
    return static_cast<std::size_t>(s4u::Activity::wait_any(raw));
  }

private:
  void started() override
  {
    for (auto* host : sg_.hosts)
      disks_.push_back(host->get_disks().empty() ? nullptr : host->get_disks().front());
  }
  std::vector<s4u::Disk*> disks_;
};

} // namespace

std::unique_ptr<ActorRuntime> make_simgrid_actor_runtime(const PlatformSpec& platform)
{
  return std::make_unique<SimgridActorRuntime>(platform);
}

} // namespace cs
