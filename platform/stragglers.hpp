// Heterogeneity and stragglers (`cluster.stragglers`): per-device speed, random per-step slowdowns, and a replayable
// per-worker step-time trace. Every workload asks the same seeded model, so a scenario's stragglers are reproducible.
#pragma once

#include "base/yaml_reader.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cs {

/** Devices that run at `factor` of the catalog speed: older GPU generations (0.6), fail-slow GPUs (0.25). */
struct SlowDevices {
  std::vector<int> devices; // device (GPU or CPU host) indices
  std::vector<int> nodes;   // or every device of these nodes (GPU clusters) / hosts (CPU clusters)
  double factor = 1.0;      // relative speed, > 0 (2 = twice as fast)
};

/** How long a random slowdown lasts: the duration itself, exponential with that mean, or uniform on [0, 2 d]. */
enum class SlowdownDistribution { FIXED, EXPONENTIAL, UNIFORM };

/** Before each step a device sleeps with `probability` (the partial-reduce artifacts' random_wait). */
struct RandomSlowdown {
  double probability = 0;
  Seconds duration{0}; // fixed: this; exponential: its mean; uniform: on [0, 2 x duration]
  SlowdownDistribution distribution = SlowdownDistribution::FIXED;
};

struct StragglerParams {
  std::vector<SlowDevices> slow;
  /** Relative standard deviation of each device's sustained speed: identical parts differ by manufacturing and power
   *  management (Sinha et al., SC'22). 0 = every device at the catalog's speed. */
  double spread = 0;
  RandomSlowdown random;
  std::string step_times; // CSV worker,step,seconds (path relative to the scenario); "" = none
};

/** Reads `cluster.stragglers`. */
void read_stragglers(ObjectReader& r, StragglerParams& s);

/** Recorded step times: per worker, its steps in order. */
struct StepTimeTrace {
  std::map<int, std::vector<double>> steps; // worker -> seconds of step 0, 1, ...
};

/** Reads `worker,step,seconds` rows (a header line allowed; steps of a worker 0, 1, 2, ... in order).
 *  Throws InputError with the row and column of a malformed value. */
StepTimeTrace read_step_time_trace(const std::string& path);

/** The stragglers of one run: a device's speed, the seeded slowdown before each of its steps, recorded times. */
class StragglerModel {
public:
  StragglerModel() = default;
  /** `devices_per_node` maps `nodes` entries to devices; `trace` may be empty. */
  StragglerModel(const StragglerParams& params, int devices, int devices_per_node, std::uint64_t seed,
                 StepTimeTrace trace = {});

  /** Relative speed of `device` (1 = the catalog's). */
  double speed(int device) const;
  /** The random slowdown before `device`'s step `step` (0 when none): a pure function of seed, device and step. */
  double delay(int device, long long step) const;
  /** A step of `base` seconds at full speed on `device`: the recorded time when the trace has the device (steps
   *  past its end repeat it from the start), else base / speed + delay. */
  double step_seconds(int device, long long step, double base) const;
  /** Whether anything here differs from a uniform, undisturbed cluster. */
  bool any() const;
  /** The slowest device's speed (1 when there are no devices). */
  double slowest() const;
  /** Devices `slow` makes slower than the catalog (factor < 1), for summaries; the spread's are not counted. */
  int slow_devices() const;
  /** The model a simulation sees when each aligned group of `size` devices is simulated as its first device (the
   *  tensor-parallel ranks of a training graph): every device takes its group's slowest speed, since the group
   *  synchronises at every layer. Delays and the trace stay per device. */
  StragglerModel slowest_in_groups(int size) const;
  /** The same for arbitrary groups of devices (indices past the model's devices are ignored). */
  StragglerModel slowest_of(const std::vector<std::vector<int>>& groups) const;
  /** slowest_of, and each device's random slowdown before a step its group's longest: for groups simulated as one
   *  device that meet at every layer (the tensor- and context-parallel ranks of a training graph), so a slowdown on
   *  any member holds the group back. Groups must not overlap. */
  StragglerModel slowest_and_latest_of(const std::vector<std::vector<int>>& groups) const;

private:
  double own_delay(int device, long long step) const;

  std::vector<double> speed_;
  std::vector<int> delay_group_;                // per device: its index in delay_groups_, or -1 (empty: none)
  std::vector<std::vector<int>> delay_groups_; // devices whose longest slowdown each member takes
  RandomSlowdown random_;
  std::uint64_t seed_ = 1;
  StepTimeTrace trace_;
  int slow_devices_ = 0;
};

} // namespace cs
