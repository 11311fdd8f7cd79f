// DeepSeek's eight DualPipe steps for one rank, shared by DualPipe (two copies of the model) and DualPipeV (one, in a
// V).
#pragma once

#include "policies/pipeline/pipeline_schedule.hpp"

#include <vector>

namespace cs {

/** The ops of rank `h` of `ranks` ranks in one direction over `microbatches` microbatches a direction (DeepSeek's
 *  DualPipe repository: dualpipev.py with ranks = pp; dualpipe.py with ranks = pp / 2, h = min(r, pp - 1 - r)).
 *  Chunk 0 is the phase that runs first (dualpipe.py's phase 0), chunk 1 the other. Steps: (1) 2(ranks - h - 1)
 *  forwards of chunk 0; (2) h + 1 pairs of forwards of chunks 0 and 1; (3) ranks - h - 1 times a split backward of
 *  chunk 1, its weight gradient and a forward of chunk 1; (4) microbatches - 2 ranks + h + 1 times forward 0 with
 *  backward 1 then forward 1 with backward 0, overlapped (the middle rank, h = ranks - 1, runs its first pair apart);
 *  (5) ranks - h - 1 times backward 1, then forward 1 with backward 0 overlapped; (6) h + 1 times backward 1 and
 *  backward 0, split from the middle on (odd h from backward 1, even h from backward 0); (7) ranks - h - 1 times a
 *  queued weight gradient and a split backward of chunk 0; (8) the h + 1 weight gradients left. Needs
 *  microbatches >= 2 ranks. */
std::vector<PipelineOp> dualpipe_rank_steps(int ranks, int h, int microbatches);

/** Where both DualPipe schedules put their chunks: device d holds stages d and 2 devices - 1 - d (one stage a device
 *  when chunks is not 2). */
std::vector<std::vector<int>> mirrored_stages(int devices, int chunks);

} // namespace cs
