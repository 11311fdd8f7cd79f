// Pipeline schedules: the order in which each pipeline device runs its forward and backward passes.
#pragma once

#include "base/registry.hpp"
#include "policies/pipeline/stage_map.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** What a pass computes. BACKWARD is the whole backward pass; schedules that split it (zero-bubble) run
 *  BACKWARD_INPUT (the input gradient, which the previous stage waits for) and BACKWARD_WEIGHT (the weight gradient,
 *  which nothing downstream waits for) as two ops. */
enum class Pass : std::uint8_t { FORWARD, BACKWARD, BACKWARD_INPUT, BACKWARD_WEIGHT };

/** Whether an op runs on its own or interleaved with a neighbour in its device's order: a backward and a forward of
 *  other microbatches (or chunks) run as one op whose kernels alternate at their communication waits, so that one's
 *  all-to-all hides under the other's compute (Megatron-Core's combined 1F1B, DualPipe's overlapped chunks). */
enum class Overlap : std::uint8_t { NONE, WITH_NEXT, WITH_PREVIOUS };

/** One pass of one microbatch through one model chunk on a device. */
struct PipelineOp {
  Pass pass = Pass::FORWARD;
  int microbatch = 0;
  int chunk = 0; // model chunk on this device (0 .. chunks-1); its virtual stage is the schedule's stage_map
  Overlap overlap = Overlap::NONE;
  // An overlapped pair that runs a layer at a time and frees each backward layer's activations as it goes
  // (Megatron-Core's schedule plan): it holds one layer beyond its chunks, not a chunk (DualPipe's pairs do not).
  bool frees_by_layer = false;

  bool forward() const { return pass == Pass::FORWARD; }
  /** The pass the previous stage waits for (its gradient input). */
  bool sends_gradient() const { return pass == Pass::BACKWARD || pass == Pass::BACKWARD_INPUT; }
  /** The pass after which the microbatch's activations are freed and its weight gradients complete. */
  bool completes() const { return pass == Pass::BACKWARD || pass == Pass::BACKWARD_WEIGHT; }
  static PipelineOp F(int mb, int chunk = 0) { return {Pass::FORWARD, mb, chunk}; }
  static PipelineOp B(int mb, int chunk = 0) { return {Pass::BACKWARD, mb, chunk}; }
};

/** A schedule: for `devices` pipeline devices each holding `chunks` model chunks, the ordered ops of each
 *  device over `microbatches` microbatches. The task graph adds the data dependencies between devices. */
class PipelineSchedule : public Configurable {
public:
  virtual ~PipelineSchedule() = default;
  /** Throws std::invalid_argument when the schedule cannot run this shape (e.g. interleaving with m % p != 0). */
  virtual std::vector<std::vector<PipelineOp>> order(int devices, int chunks, int microbatches) const = 0;
  /** Why the schedule cannot run on `devices` pipeline devices (empty: it can); order() throws the same. */
  virtual std::string devices_problem(int devices) const { return {}; }
  /** Whether its orders pair ops to run overlapped (Overlap::WITH_NEXT). */
  virtual bool overlaps_passes() const { return false; }
  /** Whether its orders split backward passes into BACKWARD_INPUT and BACKWARD_WEIGHT. */
  virtual bool splits_backward() const { return false; }
  /** Chunks per device this schedule expects given the scenario's vpp (1 for non-interleaved schedules). */
  virtual int chunks(int vpp) const { return 1; }
  /** Which virtual stage each device's chunk holds: Megatron's interleaved placement unless the schedule places its
   *  chunks otherwise (a V shape). Builders, bounds and planners ask this map, never a formula. */
  virtual StageMap stage_map(int devices, int chunks) const { return StageMap::interleaved(devices, chunks); }
  /** Whether it runs a layer graph's stages as a DAG, cut by branch (the graph pipeline); chain schedules cut layers
   *  into a chain. */
  virtual bool runs_stage_dags() const { return false; }
  /** The order for stages that form a DAG (`successors[s]`: the stages fed by stage s; one stage per device).
   *  Chain schedules accept only a chain (successors[s] = {s + 1}) and run their own order on it. */
  virtual std::vector<std::vector<PipelineOp>> order_dag(const std::vector<std::vector<int>>& successors,
                                                         int microbatches) const
  {
    const int p = static_cast<int>(successors.size());
    for (int s = 0; s < p; ++s)
      if (successors[s] != (s + 1 < p ? std::vector<int>{s + 1} : std::vector<int>{}))
        throw std::invalid_argument("this schedule runs a chain of stages; branching stages need the graph-pipeline "
                                    "schedule");
    return order(p, 1, microbatches);
  }
};

/** Pairs each whole backward with the forward right after it (Overlap::WITH_NEXT / WITH_PREVIOUS), as Megatron-Core's
 *  combined 1F1B runs the steady state (--overlap-moe-expert-parallel-comm): with no pipelining the forward of
 *  microbatch i + 1 with the backward of i; interleaved, each backward with the next forward, which is Megatron's
 *  one extra warm-up microbatch. Its schedule plan runs forward layer k beside the backward of the other chunk's
 *  layer L - 1 - k and releases each backward layer's state after it (model_chunk_schedule_plan.py), so the pairs
 *  free by layer. Ops already paired are left as they are. */
void pair_backward_with_next_forward(std::vector<std::vector<PipelineOp>>& order);

/** Per device, the most microbatch-chunks whose forward has run and whose activations are not yet freed (by its
 *  BACKWARD, or its BACKWARD_WEIGHT when the backward is split). The two ops of an overlapped pair run together:
 *  the forward's activations are held before the backward frees its own, unless the pair frees by layer
 *  (PipelineOp::frees_by_layer), when it holds what was held before it or after it, whichever is more (the layer
 *  beyond that is the memory model's: MemoryLayout::pair_holds_a_layer). */
std::vector<int> peak_in_flight(const std::vector<std::vector<PipelineOp>>& order);

/** 1F1B's order given each device's warm-up: warmup[d] forwards, then one forward and one backward in turn
 *  while forwards remain, then the remaining backwards. */
std::vector<std::vector<PipelineOp>> warmup_then_alternate(const std::vector<int>& warmup, int microbatches);

/** Per stage of a DAG, the most stages on a path from it to a sink, not counting itself (0 for a sink). */
std::vector<int> depth_to_sink(const std::vector<std::vector<int>>& successors);

} // namespace cs
