// The metrics of a profiler or execution-trace replay (declared once; written by kineto-replay and chakra-replay).
#pragma once

#include "core/common_metrics.hpp"

namespace cs::metric {

CS_METRIC(recorded_step_time_s, SECONDS, "the step time the trace recorded");
CS_METRIC(step_time_error, RATIO, "replayed step over recorded step, less 1");

} // namespace cs::metric
