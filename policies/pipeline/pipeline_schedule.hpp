// Pipeline schedules: the order in which each pipeline device runs its forward and backward passes.
#pragma once

#include <vector>

namespace cs {

/** One pass of one microbatch through one model chunk on a device. */
struct PipelineOp {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0; // model chunk on this device (0 .. chunks-1); virtual stage = chunk * devices + device
};

/** A schedule: for `devices` pipeline devices each holding `chunks` model chunks, the ordered ops of each
 *  device over `microbatches` microbatches. The task graph adds the data dependencies between devices. */
class PipelineSchedule {
public:
  virtual ~PipelineSchedule() = default;
  /** Throws std::invalid_argument when the schedule cannot run this shape (e.g. interleaving with m % p != 0). */
  virtual std::vector<std::vector<PipelineOp>> order(int devices, int chunks, int microbatches) const = 0;
  /** Chunks per device this schedule expects given the scenario's vpp (1 for non-interleaved schedules). */
  virtual int chunks(int vpp) const { return 1; }
};

} // namespace cs
