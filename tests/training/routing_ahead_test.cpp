// Routings drawn ahead on a second thread (workloads/training/routing_ahead.hpp): the same routings as drawn one by
// one, kept until taken, bounded, and a draw's failure on either thread reaches the caller.
#include "workloads/training/routing_ahead.hpp"

#include "base/registry.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace {

cs::RoutingRequest request(int microbatch, int group)
{
  return {.layer = 2,
          .microbatch = microbatch,
          .group = group,
          .ranks = 8,
          .samples_per_rank = 2,
          .tokens_per_sample = 1024,
          .experts = 16,
          .top_k = 2,
          .seed = 11};
}

cs::RoutingAhead::Key key(int microbatch, int group) { return {0, 2, microbatch, group}; }

cs::RoutingAhead::Ahead next_of(int first, int count)
{
  cs::RoutingAhead::Ahead next;
  for (int m = first; m < first + count; ++m)
    for (int g = 0; g < 2; ++g)
      next.emplace_back(key(m, g), request(m, g));
  return next;
}

// A model whose draw for one microbatch and group fails, as a model reading a trace past its end would.
class FailingRouting : public cs::RoutingModel {
public:
  FailingRouting(int microbatch, int group) : microbatch_(microbatch), group_(group) {}
  cs::Routing route(const cs::RoutingRequest& q) const override
  {
    if (q.microbatch == microbatch_ && q.group == group_)
      throw std::runtime_error("no routing for this step");
    return cs::Routing{{{1.0}}};
  }

private:
  int microbatch_, group_;
};

} // namespace

TEST(RoutingAhead, DrawsAheadTheRoutingsOneByOneDrawsGiveAndKeepsThemUntilTaken)
{
  auto zipf = cs::Registry<cs::RoutingModel>::instance().create("zipf");
  cs::RoutingAhead ahead(*zipf, 64);
  // The first step's routing, with seven more drawn beside it (microbatches 0-3 of groups 0 and 1, less itself).
  cs::RoutingAhead::Ahead next = next_of(0, 4);
  next.erase(next.begin());
  EXPECT_EQ(ahead.take(key(0, 0), request(0, 0), next).tokens, zipf->route(request(0, 0)).tokens);
  for (int m = 0; m < 4; ++m)
    for (int g = 0; g < 2; ++g) {
      if (m == 0 && g == 0)
        continue;
      ASSERT_TRUE(ahead.holds(key(m, g))) << m << " " << g;
      EXPECT_EQ(ahead.take(key(m, g), request(m, g), {}).tokens, zipf->route(request(m, g)).tokens) << m << " " << g;
      EXPECT_FALSE(ahead.holds(key(m, g))); // taken once
    }
}

TEST(RoutingAhead, DrawsNothingAheadPastItsLimit)
{
  auto uniform = cs::Registry<cs::RoutingModel>::instance().create("uniform");
  cs::RoutingAhead ahead(*uniform, 4);
  const cs::RoutingAhead::Ahead next = next_of(1, 3); // six: more than the four it may keep
  EXPECT_EQ(ahead.take(key(0, 0), request(0, 0), next).tokens, uniform->route(request(0, 0)).tokens);
  for (const auto& [k, q] : next)
    EXPECT_FALSE(ahead.holds(k));
}

TEST(RoutingAhead, AFailedDrawOnEitherThreadReachesTheCaller)
{
  // next_of(1, 2) is (1, 0), (1, 1), (2, 0), (2, 1): the second thread draws the first and third, this one the rest.
  for (int group : {0, 1}) {
    FailingRouting failing(1, group);
    cs::RoutingAhead ahead(failing, 64);
    EXPECT_THROW(ahead.take(key(0, 0), request(0, 0), next_of(1, 2)), std::runtime_error) << group;
    EXPECT_FALSE(ahead.holds(key(2, 0))); // nothing kept from a failed batch
  }
}
