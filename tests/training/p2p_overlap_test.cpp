// Megatron-Core's overlap_p2p_comm (framework.overlap_p2p_comm): under an interleaved schedule a pipeline send is
// waited for before the next op of its pass, so the other pass's op between them hides it; without virtual stages
// Megatron batches and waits, and the flag changes nothing.
#include "tests/scenario/reference_run.hpp"

#include <gtest/gtest.h>

namespace {

double step_s(const std::string& sets)
{
  return cs::testing::reference_metrics("mbridge-llama3-70b-fp8.yaml", sets)["iteration_time_s"].get<double>();
}

} // namespace

TEST(P2pOverlap, InterleavedSendsHideBehindTheOtherPassAndPlainOnesStillWait)
{
  // Llama 3 70B, TP 4 x PP 8 (VP 5) over 64 H100: the pipeline sends cross nodes, about 0.8 s of a 21 s step.
  const double overlapped = step_s(""), waited = step_s(" --set workload.framework.overlap_p2p_comm=false");
  EXPECT_LT(overlapped, waited - 0.01 * waited);
  EXPECT_GT(overlapped, 0.9 * waited); // the sends are a few percent of the step, not more
  const std::string plain = " --set workload.parallel.vpp=1 --set policies.pipeline=1f1b";
  EXPECT_EQ(step_s(plain), step_s(plain + " --set workload.framework.overlap_p2p_comm=false"));
}
