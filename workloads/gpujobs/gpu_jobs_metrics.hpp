// The metrics a GPU-cluster job trace's replay reports (declared once; written by the gpu-jobs kind).
#pragma once

#include "core/common_metrics.hpp"

namespace cs::metric {

CS_METRIC(mean_queueing_delay_s, SECONDS, "mean time a job waits from submission to start");
CS_METRIC(p95_queueing_delay_s, SECONDS, "95th percentile of the queueing delay");
CS_METRIC(gpu_utilization, FRACTION, "GPU-seconds busy over the cluster's GPUs times makespan");
CS_METRIC(fragmentation, FRACTION, "GPU-seconds free but unusable by the next job, over GPUs times makespan");
CS_METRIC(mean_placement_slowdown, RATIO, "multi-GPU jobs: mean slowdown of their placement against consolidated");
CS_METRIC(multi_node_share, FRACTION, "share of multi-GPU jobs placed across nodes");

} // namespace cs::metric
