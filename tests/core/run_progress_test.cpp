// A long command's stage in run_progress(): named and counted while its ProgressStage lives, cleared after.
#include "core/run_progress.hpp"

#include <gtest/gtest.h>
#include <string>

TEST(RunProgress, AStageIsNamedAndCountedWhileItLives)
{
  EXPECT_EQ(cs::run_progress().stage.load(), nullptr);
  {
    cs::ProgressStage stage("plans checked", 3);
    EXPECT_EQ(std::string(cs::run_progress().stage.load()), "plans checked");
    EXPECT_EQ(cs::run_progress().stage_total.load(), 3u);
    stage.advance();
    stage.advance();
    EXPECT_EQ(cs::run_progress().stage_done.load(), 2u);
    cs::ProgressStage next("plans simulated", 5); // a new stage starts its own count
    EXPECT_EQ(cs::run_progress().stage_done.load(), 0u);
    EXPECT_EQ(cs::run_progress().stage_total.load(), 5u);
  }
  EXPECT_EQ(cs::run_progress().stage.load(), nullptr);
}
