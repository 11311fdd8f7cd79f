#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "workloads/training/training_metrics.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace {

TEST(Metric, DeclarationsAreOneCatalogSortedByName)
{
  const auto catalog = cs::metric_catalog();
  ASSERT_GE(catalog.size(), 2u);
  for (std::size_t i = 1; i < catalog.size(); ++i)
    EXPECT_LT(catalog[i - 1]->name, catalog[i]->name);
  EXPECT_EQ(cs::find_metric("iteration_time_s"), &cs::metric::iteration_time_s);
  EXPECT_EQ(cs::find_metric("fits_in_memory")->unit, cs::MetricUnit::FLAG);
  EXPECT_EQ(cs::find_metric("no_such_metric"), nullptr);
  for (const cs::Metric* m : catalog) { // every declaration says what it measures
    EXPECT_FALSE(m->description.empty()) << m->name;
    EXPECT_NE(cs::unit_symbol(m->unit), "?") << m->name;
  }
}

TEST(Metric, ANameDeclaredTwiceIsRefused)
{
  EXPECT_THROW(cs::declare_metric("iteration_time_s", cs::MetricUnit::SECONDS, "again"), std::logic_error);
}

TEST(RunMetrics, ValuesAndFlagsAreSetThroughTheirDeclarations)
{
  cs::RunMetrics run;
  run.set(cs::metric::iteration_time_s, 1.5);
  run.set_flag(cs::metric::fits_in_memory, true);
  EXPECT_DOUBLE_EQ(run.at(cs::metric::iteration_time_s), 1.5);
  EXPECT_TRUE(run.flag(cs::metric::fits_in_memory));
  EXPECT_TRUE(run.contains(cs::metric::fits_in_memory));
  EXPECT_FALSE(run.contains(cs::metric::makespan_s));
  EXPECT_THROW(run.at(cs::metric::makespan_s), std::logic_error); // not set by this run
  EXPECT_THROW(run.set(cs::metric::fits_in_memory, 1.0), std::logic_error);
  EXPECT_THROW(run.set_flag(cs::metric::makespan_s, true), std::logic_error);
  ASSERT_EQ(run.values().size(), 1u);
  EXPECT_EQ(run.values().begin()->first, "iteration_time_s");
}

} // namespace
