// Kineto replay: the recorded step time comes back on the recorded cluster (both backends), kernels rescale between
// GPUs by the documented ratios, a slower fabric lengthens the step, and malformed traces are refused cleanly.
#include "base/input_error.hpp"
#include "models/devices/device_catalog.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"
#include "traces/kineto_trace.hpp"
#include "workloads/replay/replay_graph.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;
using cs::testing::write_temp;

nlohmann::json kineto_report(const std::string& args)
{
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("cs_kr_" + std::to_string(::getpid()) + "_" + std::to_string(++n));
  auto r = cs::testing::run_clustersim("run " + src("scenarios/kineto-replay.yaml") + " --quiet --out " + dir.string() +
                                       " " + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto out = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return out.is_discarded() ? nlohmann::json::object() : out;
}

double kineto_step(const nlohmann::json& r) { return r["metrics"].value("iteration_time_s", -1.0); }

} // namespace

TEST(KinetoReplay, TheRecordedClusterGivesBackTheRecordedStepOnBothBackends)
{
  for (const char* backend : {"analytical", "simgrid"}) {
    const auto r = kineto_report(std::string("--backend ") + backend);
    EXPECT_NEAR(r["metrics"].value("step_time_error", 1.0), 0.0, 0.10) << backend;
    EXPECT_EQ(r["breakdown"].value("steps", 0.0), 3.0);
    EXPECT_EQ(r["breakdown"].value("kernels", 0.0), 2679.0);
    EXPECT_EQ(r["breakdown"].value("collectives", 0.0), 21.0);
    EXPECT_EQ(r["breakdown"].value("modeled_collectives", -1.0), 0.0); // measured on the recorded cluster
  }
}

TEST(KinetoReplay, APyTorch211StepRecordedOnTheH200ComesBack)
{
  // One HF Llama 1B training step, PyTorch 2.11's profiler on the lent H200 (traces/samples/MANIFEST.md): its GPU
  // span, first kernel to last, was 155.90 ms; no profiler steps, so the whole trace is one step.
  const std::string args = "--set cluster.device=h200-sxm --set cluster.gpus_per_node=1 --set workload.ranks=1 "
                           "--set workload.profiler_trace=" +
                           src("traces/samples/kineto/hf-llama-1b-step-h200.json.gz");
  for (const char* backend : {"analytical", "simgrid"}) {
    const auto r = kineto_report(args + " --backend " + backend);
    EXPECT_NEAR(kineto_step(r) / 155.90e-3, 1.0, 0.005) << backend;
    EXPECT_EQ(r["breakdown"].value("kernels", 0.0), 2434.0) << backend;
  }
}

TEST(KinetoReplay, AnotherGpuOrFabricChangesTheStepTheWayItShould)
{
  const double recorded = kineto_step(kineto_report(""));
  // A faster GPU cannot lengthen a step; this one is paced by its CPU, so it barely shortens.
  EXPECT_LE(kineto_step(kineto_report("--set cluster.device=h100-sxm5")), recorded * 1.0001);
  // 64 ranks over 10 Gb/s: the all-reduces the CPU waits for take longer.
  const double slow =
      kineto_step(kineto_report("--set workload.ranks=64 --set cluster.nodes=8 --set cluster.gpus_per_node=8 "
                                "--set cluster.network.nic_bandwidth=10Gb/s"));
  EXPECT_GT(slow, 1.2 * recorded);
}

TEST(KinetoReplay, KernelsRescaleByPeakOrBandwidth)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  const cs::DeviceSpec &a100 = *cat.find("a100-sxm4-40gb"), &h100 = *cat.find("h100-sxm5");
  EXPECT_DOUBLE_EQ(cs::rescale_kernel("ampere_fp16_s16816gemm_fp16_128x128", 1.0, a100, h100),
                   a100.peak("fp16") / h100.peak("fp16"));
  EXPECT_DOUBLE_EQ(cs::rescale_kernel("void at::native::vectorized_elementwise_kernel<4>", 1.0, a100, h100),
                   a100.memory_bandwidth / h100.memory_bandwidth);
}

TEST(KinetoReplay, MalformedTracesAreRefusedWithAPosition)
{
  auto refused = [](const std::string& text, const std::string& words) {
    const fs::path p = write_temp("bad.json", text);
    try {
      cs::read_kineto(p.string());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const cs::InputError& e) {
      EXPECT_NE(e.where().find(words), std::string::npos) << e.where();
    }
    fs::remove(p);
  };
  refused("{\"traceEvents\": [", ":1:");
  refused("{\"schemaVersion\": 1}", "traceEvents: not a Kineto trace");
  refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1}]}", "traceEvents[0].dur: expected");
  refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": -5}]}", "out of range");
  refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 5}]}", "nothing to replay");
  // A result of 1e288 seconds is a bad input, not an answer: a 1e300-element message, a kernel of 1e17 us.
  refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 5, \"args\": "
          "{\"Collective name\": \"allreduce\", \"In msg nelems\": 1e300}}]}",
          "traceEvents[0].args.In msg nelems: 1e+300 elements");
  refused("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 1e17}]}", "at most a day");
  refused(std::string("\x1f\x8b\x08\x00garbage", 12), "");
  // Fields of the wrong JSON type are read as absent, not thrown past the reader (fuzzing found a numeric name).
  const fs::path odd = write_temp("odd.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": 5, "
                                              "\"ts\": 1, \"dur\": 2}], \"distributedInfo\": {\"rank\": \"0\"}}");
  EXPECT_EQ(cs::read_kineto(odd.string()).ops.size(), 1u);
  fs::remove(odd);
  // A trace without deviceProperties needs from_device.
  auto r = cs::testing::run_clustersim(
      "run " + src("scenarios/kineto-replay.yaml") +
      " --quiet --out /tmp/cs_kr_never --set workload.profiler_trace=sampled_rank-0.json.gz");
  EXPECT_EQ(r.code, 2) << r.err;
  r = cs::testing::run_clustersim(
      "run " + src("scenarios/kineto-replay.yaml") +
      " --quiet --out /tmp/cs_kr_never --set workload.profiler_trace=../traces/samples/kineto/sampled_rank-0.json.gz");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("give from_device"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/tmp/cs_kr_never"));
}

TEST(KinetoReplay, ACollectiveGroupLargerThanTheClusterIsBadInputNotACrash)
{
  // Once an uncaught vector::_M_range_check (exit 1): an NCCL kernel recording a group of 10^12 ranks.
  nlohmann::json nccl = {{"ph", "X"},
                         {"cat", "kernel"},
                         {"name", "ncclKernel_AllReduce_RING_LL_Sum_float"},
                         {"pid", 0},
                         {"tid", 7},
                         {"ts", 10},
                         {"dur", 50},
                         {"args",
                          {{"correlation", 3},
                           {"stream", 7},
                           {"Collective name", "allreduce"},
                           {"In msg nelems", 1048576},
                           {"dtype", "Float"},
                           {"Group size", 1000000000000LL}}}};
  nlohmann::json launch = {
      {"ph", "X"}, {"cat", "cuda_runtime"},       {"name", "cudaLaunchKernel"}, {"pid", 0}, {"tid", 1}, {"ts", 5},
      {"dur", 2},  {"args", {{"correlation", 3}}}};
  nlohmann::json trace = {{"traceEvents", {nccl, launch}},
                          {"distributedInfo", {{"rank", 0}, {"world_size", 2}}},
                          {"deviceProperties", {{{"name", "NVIDIA A100-SXM4-40GB"}}}}};
  const fs::path t = write_temp("huge_group.json", trace.dump());
  const fs::path out = fs::temp_directory_path() / ("cs_kr_huge_" + std::to_string(::getpid()));
  auto r = cs::testing::run_clustersim("run " + src("scenarios/kineto-replay.yaml") + " --quiet --set " +
                                       "workload.profiler_trace=" + t.string() +
                                       " --set workload.collectives=modeled --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("has a group of 1048576 ranks and the cluster 2 GPUs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // With ranks given, the same trace replays.
  EXPECT_EQ(cs::testing::run_clustersim("run " + src("scenarios/kineto-replay.yaml") + " --quiet --set " +
                                        "workload.profiler_trace=" + t.string() + " --set workload.ranks=2 --out " +
                                        out.string())
                .code,
            0);
  fs::remove_all(out);
  fs::remove(t);
}

namespace {

// Events of a hand-made trace (times in microseconds). Copies, not kernels: their times are their own (kernels on
// different streams would share the GPU), so what waits for what shows in the makespan.
nlohmann::json copy_on(long long stream, long long corr, double ts, double dur)
{
  return {{"ph", "X"},
          {"cat", "gpu_memcpy"},
          {"name", "Memcpy DtoD"},
          {"pid", 0},
          {"tid", stream},
          {"ts", ts},
          {"dur", dur},
          {"args", {{"correlation", corr}, {"stream", stream}}}};
}

nlohmann::json runtime(const char* name, long long corr, double ts, long long thread = 1)
{
  return {{"ph", "X"}, {"cat", "cuda_runtime"},          {"name", name}, {"pid", 0}, {"tid", thread}, {"ts", ts},
          {"dur", 1},  {"args", {{"correlation", corr}}}};
}

double replayed_makespan(const nlohmann::json& events, std::string* summary = nullptr)
{
  const nlohmann::json trace = {{"traceEvents", events}, {"deviceProperties", {{{"name", "NVIDIA A100-SXM4-40GB"}}}}};
  const fs::path t = write_temp("waits.json", trace.dump());
  const fs::path out = cs::testing::fresh_dir("cs_kr_waits");
  auto r = cs::testing::run_clustersim("run " + src("scenarios/kineto-replay.yaml") +
                                       " --set cluster.gpus_per_node=1 --set workload.profiler_trace=" + t.string() +
                                       " --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  if (summary)
    *summary = r.out;
  const auto report = cs::testing::read_json(out / "report.json");
  fs::remove_all(out);
  fs::remove(t);
  return report["metrics"].value("makespan_s", -1.0);
}

} // namespace

TEST(KinetoReplay, AStreamWaitsForTheEventsStreamAsItWasWhenRecorded)
{
  // Thread 1: a 10 ms copy on stream 7, a 1 ms copy on stream 30, an event recorded, 50 ms more on stream 7, a wait,
  // then an 80 ms copy on stream 20. Waiting for every stream as it is at the launch puts the 80 ms after the 50 ms
  // (140 ms); the event's stream is the one the thread last launched on (30), as it was at the record (81 ms).
  nlohmann::json events = {runtime("cudaMemcpyAsync", 1, 0),  copy_on(7, 1, 5, 10000),
                           runtime("cudaMemcpyAsync", 6, 2),  copy_on(30, 6, 6, 1000),
                           runtime("cudaEventRecord", 2, 10), runtime("cudaMemcpyAsync", 3, 20),
                           copy_on(7, 3, 10005, 50000),       runtime("cudaStreamWaitEvent", 4, 30),
                           runtime("cudaMemcpyAsync", 5, 40), copy_on(20, 5, 1006, 80000)};
  EXPECT_NEAR(replayed_makespan(events), 81.0e-3, 0.2e-3);
  // When the profiler recorded the wait on the GPU (enable_cuda_sync_events), its stream and record are used: the
  // event was taken on stream 7 after the 10 ms copy, so the 80 ms copy ends at 90 ms.
  events.push_back(
      {{"ph", "X"},
       {"cat", "cuda_sync"},
       {"name", "Stream Wait Event"},
       {"pid", 0},
       {"tid", 20},
       {"ts", 31},
       {"dur", 0},
       {"args",
        {{"correlation", 4}, {"stream", 20}, {"wait_on_stream", 7}, {"wait_on_cuda_event_record_corr_id", 2}}}});
  EXPECT_NEAR(replayed_makespan(events), 90.0e-3, 0.2e-3);
  // A wait with no record on its thread to pair with waits for every stream, as before.
  nlohmann::json unpaired = {runtime("cudaMemcpyAsync", 1, 0), copy_on(7, 1, 5, 10000),
                             runtime("cudaStreamWaitEvent", 4, 30, 2), runtime("cudaMemcpyAsync", 5, 40, 2),
                             copy_on(20, 5, 10005, 80000)};
  EXPECT_NEAR(replayed_makespan(unpaired), 90.0e-3, 0.2e-3);
}

TEST(KinetoReplay, WhenTheGpuSetsThePaceTheStepIsTheGpus)
{
  // Two profiler steps of 1 ms on the CPU, each launching 10 ms of copies without waiting for them: the CPU's
  // annotation says 1 ms a step, the GPU ran one every 10 ms, and that is what is compared.
  nlohmann::json events = {{{"ph", "X"},
                            {"cat", "user_annotation"},
                            {"name", "ProfilerStep#1"},
                            {"pid", 0},
                            {"tid", 1},
                            {"ts", 0},
                            {"dur", 1000}},
                           {{"ph", "X"},
                            {"cat", "user_annotation"},
                            {"name", "ProfilerStep#2"},
                            {"pid", 0},
                            {"tid", 1},
                            {"ts", 1000},
                            {"dur", 1000}},
                           runtime("cudaMemcpyAsync", 1, 100),
                           copy_on(7, 1, 105, 10000),
                           runtime("cudaMemcpyAsync", 2, 1100),
                           copy_on(7, 2, 10105, 10000)};
  std::string summary;
  replayed_makespan(events, &summary);
  EXPECT_NE(summary.find("10.00 ms replayed, 10.00 ms recorded (+0.0%), 2 steps, the GPU's pace"), std::string::npos)
      << summary;
}

TEST(KinetoReplay, APyTorch19TraceInThatErasNamesReplays)
{
  // PyTorch 1.9 wrote Kernel, Memcpy, Memset, Runtime and Operator (ProfilerStep among the operators) and thread ids
  // as strings ("stream 7"); it was once refused as having no GPU kernel. Each step opens with ~70 ms of CPU data
  // loading before its first launch, which belongs to the step.
  const auto t = cs::read_kineto(src("traces/samples/kineto/resnet50-pytorch1.9-v100-3steps.json.gz"));
  EXPECT_EQ(t.ops.size(), 3982u);
  EXPECT_EQ(t.calls.size(), 5961u);
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.ops.front().stream, 7);
  EXPECT_EQ(t.device_name, "Tesla V100-DGXS-32GB");
  const std::string args = "--set cluster.device=v100-sxm2 --set cluster.gpus_per_node=1 --set "
                           "workload.profiler_trace=" +
                           src("traces/samples/kineto/resnet50-pytorch1.9-v100-3steps.json.gz");
  for (const char* backend : {"analytical", "simgrid"}) {
    const auto r = kineto_report(args + " --backend " + backend);
    EXPECT_NEAR(r["metrics"].value("step_time_error", 1.0), 0.0, 0.01) << backend;
    EXPECT_EQ(r["breakdown"].value("kernels", 0.0), 3826.0) << backend;
  }
}
