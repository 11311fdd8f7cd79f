#include "sim/runtime/simgrid_actors.hpp"

#include "sim/runtime/simgrid_session.hpp"

#include <algorithm>
#include <utility>

namespace cs {
namespace s4u = simgrid::s4u;

bool SgSignal::wait_until(double time)
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

void SgSignal::notify()
{
  std::unique_lock<s4u::Mutex> lock(*mutex);
  raised = true;
  cv->notify_all();
}

void SimgridActorsBase::run(int host, std::function<void()> main)
{
  const auto routes = simgrid_routes();
  const std::vector<char> never_bind = links_that_never_bind(platform_, routes);
  const bool fabric_left_out = std::any_of(never_bind.begin(), never_bind.end(), [](char c) { return c != 0; });
  auto engine = start_simgrid_session(platform_.network_model, SimgridPrecision{});
  // As in the task-graph executor: with thousands of flows in one sharing component, recomputing every rate at each
  // event beats the lazy model's bookkeeping (the 1,024-worker sync bench, 1,000 steps: 62.0 s -> 47.4 s). Unless
  // the fabric's links never bind and are left out of the routes: then flows share only NICs, in small components.
  if (wide_ && !fabric_left_out)
    s4u::Engine::set_config("network/optim:Full");
  sg_ = instantiate_on_simgrid(platform_, routes, never_bind);
  for (std::size_t h = 0; h < sg_.hosts.size(); ++h)
    host_index_[sg_.hosts[h]] = static_cast<int>(h);
  started();
  s4u::Actor::create("main", sg_.hosts.at(host), guarded(std::move(main)));
  engine->run();
  if (failure_)
    std::rethrow_exception(std::exchange(failure_, nullptr));
}

std::function<void()> SimgridActorsBase::guarded(std::function<void()> body)
{
  // Only std::exception: SimGrid's ForcefulKillException (a kill) must go on unwinding the killed actor.
  return [this, body = std::move(body)] {
    try {
      body();
    } catch (const std::exception&) {
      if (!failure_)
        failure_ = std::current_exception();
      s4u::Actor::kill_all(); // every actor but this one: the run cannot go on
    }
  };
}

ActorPtr SimgridActorsBase::spawn(const std::string& name, int host, std::function<void()> body)
{
  return std::make_shared<SgActor>(s4u::Actor::create(name, sg_.hosts.at(host), guarded(std::move(body))), host,
                                   &before_kill_);
}

ActorPtr SimgridActorsBase::self()
{
  s4u::Actor* me = s4u::Actor::self();
  return std::make_shared<SgActor>(s4u::ActorPtr(me), host_index_.at(me->get_host()), &before_kill_);
}

void SimgridActorsBase::compute(double seconds)
{
  s4u::this_actor::execute(seconds * s4u::this_actor::get_host()->get_speed());
}

} // namespace cs
