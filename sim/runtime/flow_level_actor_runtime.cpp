#include "sim/runtime/simgrid_actor_runtime.hpp"

#include "sim/runtime/flow_level_network.hpp"
#include "sim/runtime/simgrid_actors.hpp"

#include <algorithm>
#include <unordered_map>

namespace cs {
namespace s4u = simgrid::s4u;

namespace {

class FlowLevelActorRuntime;

/** A disk operation or flow of the flow-level model; waiters are told when it ends. */
struct Transfer final : SimActivity {
  Transfer(FlowLevelActorRuntime* rt, int id) : runtime(rt), flow(id) {}
  ~Transfer() override;
  FlowLevelActorRuntime* runtime;
  int flow;
  bool done = false;
  std::vector<s4u::Actor*> waiters; // suspended until it ends
};

// SimGrid runs the actors, their computations and sleeps; disks and flows are a FlowLevelNetwork whose events a
// daemon actor turns into wake-ups. Without routes on the SimGrid side, building a 600-host platform is cheap too.
class FlowLevelActorRuntime final : public SimgridActorsBase {
public:
  explicit FlowLevelActorRuntime(const PlatformSpec& platform) : SimgridActorsBase(platform)
  {
    const Topology& topo = platform.topology;
    for (std::size_t i = 0; i < topo.links().size(); ++i) {
      const auto& link = topo.links()[i];
      auto bg = platform.background.find(static_cast<int>(i));
      const LinkAvailability* load = bg == platform.background.end() ? nullptr : &bg->second; // both directions
      up_.push_back(net_.add_resource(link.bandwidth, load));
      down_.push_back(link.full_duplex ? net_.add_resource(link.bandwidth, load) : up_.back());
    }
    for (int h = 0; h < topo.host_count(); ++h)
      disk_.push_back(platform.host.disk_bandwidth > 0 ? net_.add_resource(platform.host.disk_bandwidth) : -1);
    before_kill_ = [this](s4u::Actor* victim) { cancel_waits(victim); };
  }

  bool has_disk(int host) const override { return disk_.at(host) >= 0; }
  ActivityPtr disk_async(int host, double bytes, bool /*write*/) override
  {
    // SimGrid's disk: reads and writes share one read-write capacity (the larger of the two bandwidths).
    return start({disk_.at(host)}, bytes, 0, 1);
  }
  ActivityPtr flow_async(int src, int dst, double bytes) override
  {
    const Path& p = path(src, dst);
    // As SimGrid's CM02 model weighs a flow: shares inversely proportional to the route's latency.
    return start(p.resources, bytes, p.latency, p.latency > 0 ? 1 / p.latency : 1);
  }
  void wait(const ActivityPtr& activity) override
  {
    auto& t = static_cast<Transfer&>(*activity);
    if (!t.done)
      block_on({&t});
  }
  std::size_t wait_any(const std::vector<ActivityPtr>& activities) override
  {
    std::vector<Transfer*> all;
    for (const auto& a : activities)
      all.push_back(&static_cast<Transfer&>(*a));
    for (;;) {
      for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i]->done)
          return i;
      block_on(all);
    }
  }

  void forget(int flow) { by_flow_[flow] = nullptr; }

private:
  std::vector<std::pair<int, int>> simgrid_routes() const override { return {{0, 0}}; }
  void started() override
  {
    s4u::Actor::create("flow-network", sg_.hosts.at(0), [this] { serve(); });
  }

  struct Path {
    std::vector<int> resources;
    double latency = 0;
  };
  const Path& path(int src, int dst)
  {
    const long long key = static_cast<long long>(src) * platform_.topology.host_count() + dst;
    auto [it, fresh] = paths_.try_emplace(key);
    if (fresh) {
      const Topology& topo = platform_.topology;
      for (const auto& use : topo.route(src, dst)) {
        it->second.resources.push_back(use.up ? up_[use.link] : down_[use.link]);
        it->second.latency += topo.links()[use.link].latency;
      }
    }
    return it->second;
  }

  ActivityPtr start(const std::vector<int>& route, double bytes, double latency, double weight)
  {
    const int id = net_.start(now(), route, bytes, latency, weight);
    auto t = std::make_shared<Transfer>(this, id);
    if (by_flow_.size() <= static_cast<std::size_t>(id))
      by_flow_.resize(id + 1, nullptr);
    by_flow_[id] = t.get();
    poke();
    return t;
  }
  /** Wakes the daemon when the model's next event comes before the one it sleeps until. */
  void poke()
  {
    if (wake_ && net_.next_event() < deadline_)
      wake_->notify();
  }
  /** Suspends the caller until one of `transfers` ends. A suspend and a resume cost far less than a mutex and a
   *  condition variable per wait; the workloads resume only actors they suspended themselves, and a stray resume
   *  finds the loop still waiting. */
  void block_on(const std::vector<Transfer*>& transfers)
  {
    s4u::Actor* me = s4u::Actor::self();
    for (auto* t : transfers)
      t->waiters.push_back(me);
    waiting_[me] = transfers;
    auto ended = [&] { return std::any_of(transfers.begin(), transfers.end(), [](auto* t) { return t->done; }); };
    while (!ended())
      s4u::this_actor::suspend();
    waiting_.erase(me);
    for (auto* t : transfers)
      std::erase(t->waiters, me);
  }
  void cancel_waits(s4u::Actor* victim)
  {
    auto it = waiting_.find(victim);
    if (it == waiting_.end())
      return;
    for (auto* t : it->second)
      if (!t->done) {
        net_.cancel(now(), t->flow);
        by_flow_[t->flow] = nullptr;
        t->done = true;
      }
    waiting_.erase(it);
    poke();
  }
  /** The daemon: sleeps until the model's next event (or a poke), then ends what is due. */
  void serve()
  {
    s4u::Actor::self()->daemonize();
    wake_ = std::make_shared<SgSignal>(); // s4u synchronisation objects are made from actors, not maestro
    for (;;) {
      deadline_ = net_.next_event();
      wake_->wait_until(deadline_ >= FlowLevelNetwork::kNever ? -1 : deadline_);
      deadline_ = -1; // no pokes while it works
      // A nanosecond of slack: the clock it wakes at can round a hair below the event it slept for.
      // Every simcall yields, and the actors that run meanwhile may start, cancel or drop transfers: mark all ended
      // transfers first, then resume their waiters from a copy.
      std::vector<s4u::Actor*> wake;
      for (int id : net_.advance(now() + 1e-9)) {
        Transfer* t = by_flow_[id];
        by_flow_[id] = nullptr;
        if (!t)
          continue;
        t->done = true;
        wake.insert(wake.end(), t->waiters.begin(), t->waiters.end());
      }
      for (auto* a : wake)
        a->resume();
    }
  }

  FlowLevelNetwork net_;
  std::vector<int> up_, down_, disk_;         // resources per link direction and per host disk (-1: none)
  std::vector<Transfer*> by_flow_;            // flow id -> its activity while someone holds it
  std::unordered_map<long long, Path> paths_; // per host pair (looked up, never iterated)
  std::map<const s4u::Actor*, std::vector<Transfer*>> waiting_;
  SignalPtr wake_;
  double deadline_ = -1;
};

Transfer::~Transfer()
{
  if (!done) // nobody waits for it any more; like a SimGrid activity it runs to its end
    runtime->forget(flow);
}

} // namespace

std::unique_ptr<ActorRuntime> make_flow_level_actor_runtime(const PlatformSpec& platform)
{
  return std::make_unique<FlowLevelActorRuntime>(platform);
}

} // namespace cs
