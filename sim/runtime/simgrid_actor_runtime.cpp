#include "sim/runtime/simgrid_actor_runtime.hpp"

#include "sim/platform/simgrid_platform.hpp"
#include "sim/runtime/simgrid_session.hpp"

#include <cmath>
#include <simgrid/s4u.hpp>

namespace cs {
namespace s4u = simgrid::s4u;

namespace {

struct SgActivity final : SimActivity {
  explicit SgActivity(s4u::ActivityPtr a) : activity(std::move(a)) {}
  s4u::ActivityPtr activity;
};

struct SgActor final : SimActor {
  SgActor(s4u::ActorPtr a, int h) : actor(std::move(a)), host_index(h) {}
  int host() const override { return host_index; }
  void resume() override { actor->resume(); }
  void kill() override { actor->kill(); }
  bool is_self() const override { return actor.get() == s4u::Actor::self(); }
  s4u::ActorPtr actor;
  int host_index;
};

struct SgSignal final : SimSignal {
  s4u::MutexPtr mutex = s4u::Mutex::create();
  s4u::ConditionVariablePtr cv = s4u::ConditionVariable::create();
  bool raised = false;

  bool wait_until(double time) override
  {
    std::unique_lock<s4u::Mutex> lock(*mutex);
    while (!raised) {
      if (time < 0)
        cv->wait(lock);
      else if (cv->wait_until(lock, time) == std::cv_status::timeout && !raised)
        return false;
    }
    raised = false;
    return true;
  }
  void notify() override
  {
    std::unique_lock<s4u::Mutex> lock(*mutex);
    raised = true;
    cv->notify_all();
  }
};

class SimgridActorRuntime final : public ActorRuntime {
public:
  explicit SimgridActorRuntime(const PlatformSpec& platform) : platform_(platform) {}

  void run(int host, std::function<void()> main) override
  {
    auto engine = start_simgrid_session(platform_.network_model, SimgridPrecision{});
    sg_ = instantiate_on_simgrid(platform_, {});
    for (std::size_t h = 0; h < sg_.hosts.size(); ++h) {
      disks_.push_back(sg_.hosts[h]->get_disks().empty() ? nullptr : sg_.hosts[h]->get_disks().front());
      host_index_[sg_.hosts[h]] = static_cast<int>(h);
    }
    s4u::Actor::create("main", sg_.hosts.at(host), std::move(main));
    engine->run();
  }
  double now() const override { return s4u::Engine::get_clock(); }
  ActorPtr spawn(const std::string& name, int host, std::function<void()> body) override
  {
    return std::make_shared<SgActor>(s4u::Actor::create(name, sg_.hosts.at(host), std::move(body)), host);
  }
  ActorPtr self() override
  {
    s4u::Actor* me = s4u::Actor::self();
    return std::make_shared<SgActor>(s4u::ActorPtr(me), host_index_.at(me->get_host()));
  }
  void sleep_for(double seconds) override { s4u::this_actor::sleep_for(seconds); }
  void sleep_until(double time) override { s4u::this_actor::sleep_until(time); }
  void suspend() override { s4u::this_actor::suspend(); }
  SignalPtr make_signal() override { return std::make_shared<SgSignal>(); }
  void compute(double seconds) override
  {
    s4u::this_actor::execute(seconds * s4u::this_actor::get_host()->get_speed());
  }
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
  const PlatformSpec& platform_;
  SimgridPlatform sg_;
  std::vector<s4u::Disk*> disks_;
  std::map<const s4u::Host*, int> host_index_;
};

} // namespace

std::unique_ptr<ActorRuntime> make_simgrid_actor_runtime(const PlatformSpec& platform)
{
  return std::make_unique<SimgridActorRuntime>(platform);
}

} // namespace cs
