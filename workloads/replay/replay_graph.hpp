// A Kineto trace as a task graph: the CPU threads' runtime calls paced as recorded, each GPU operation after the call
// that launched it and in its stream's order, waits and synchronisations as dependencies; kernel times as measured
// or rescaled to another GPU, NCCL collectives as measured or priced on another fabric.
#pragma once

#include "core/task_graph.hpp"
#include "core/workload.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "traces/kineto_trace.hpp"

#include <string>
#include <vector>

namespace cs {

/** How a replay times the GPU collectives it recorded (workload.collectives). */
enum class ReplayCollectives {
  AUTO,     // modeled unless the cluster is the one recorded
  RECORDED, // their measured time
  MODELED,  // the collective tuner's for this cluster
};
/** The spellings of ReplayCollectives for ObjectReader::choice. */
inline const std::vector<std::pair<std::string, ReplayCollectives>> kReplayCollectivesChoices{
    {"auto", ReplayCollectives::AUTO},
    {"recorded", ReplayCollectives::RECORDED},
    {"modeled", ReplayCollectives::MODELED}};
/** Whether collectives are priced by the tuner under `pricing` on a cluster that is (not) the recorded one. */
inline bool models_collectives(ReplayCollectives pricing, bool recorded_cluster)
{
  return pricing == ReplayCollectives::MODELED || (pricing == ReplayCollectives::AUTO && !recorded_cluster);
}

struct ReplayOptions {
  const DeviceSpec* from = nullptr; // the GPU the trace ran on
  const DeviceSpec* to = nullptr;   // the GPU to replay on (rescaling when it differs)
  bool model_collectives = false;   // price NCCL kernels by the collective tuner instead of their measured time
  int ranks = 0;                    // modeled collectives' group size (0 = as recorded)
  const PlatformSpec* platform = nullptr;
};

struct ReplayGraph {
  TaskGraph graph;
  std::vector<int> step_start;    // per profiler step: the task of its first runtime call
  int end_marker = -1;            // the first runtime call after the last step (-1: none; the replay's end then)
  double step_lead_s = 0;         // CPU time from the first step's start to its first call (replayed as recorded)
  double step_tail_s = 0;         // from the last step's end to the end marker's call
  int gpu_first_op = -1;          // the first GPU operation launched in the first step
  std::vector<int> last_step_ops; // the GPU operations launched in the last step
  int kernels = 0, collectives = 0, copies = 0, calls = 0;
  int modeled_collectives = 0;
  double recorded_cpu_step_s = 0; // the profiler steps' mean duration, as the CPU annotated them
  double recorded_gpu_step_s = 0; // the GPU's steady-state step (0: no operation in the first or last step)
  bool gpu_bound = false;         // the GPU's step is the longer: replays are compared on it
  double recorded_step_s = 0;     // the one compared: the GPU's when gpu_bound, else the CPU's
  double recorded_gpu_s = 0;      // summed GPU operation time, as measured
};

/** The checks every replay kind makes before reading its trace: a GPU cluster, the trace file (`trace_key` names the
 *  key), a catalog `from_device` when one is given, and no more priced ranks than GPUs. */
void check_replay_inputs(const WorkloadEnv& env, const char* kind, const char* trace_key, const std::string& trace,
                         const std::string& from_device, int ranks);

/** Builds the replay of `trace`'s first device (the rank that recorded it) on host 0 of the platform. */
ReplayGraph build_replay(const KinetoTrace& trace, const ReplayOptions& options);

/** A kernel's name without its argument list and "void ", cut to 80 characters: the task's name in a replay. */
std::string short_kernel_name(const std::string& name);

/** A kernel's time on `to` from its measured time on `from`: GEMM and convolution kernels (by name) by the ratio of
 *  dense peaks for their element type, every other kernel by the ratio of memory bandwidths. */
double rescale_kernel(const std::string& name, double seconds, const DeviceSpec& from, const DeviceSpec& to);

} // namespace cs
