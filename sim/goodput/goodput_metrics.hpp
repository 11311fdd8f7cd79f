// The long run's figures as declared metrics: what `sweep --goodput-days` tabulates from each goodput.json.
#pragma once

#include "core/metric.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cs {
namespace metric {

CS_METRIC(ettr, FRACTION, "goodput: effective training time ratio, work kept over wall time (mean over seeds)");
CS_METRIC(ettr_ci95, FRACTION, "goodput: half-width of the ETTR's 95% interval over seeds");
CS_METRIC(goodput_tokens_per_s, PER_SECOND, "goodput: tokens of work kept per second of wall time");
CS_METRIC(interruptions, COUNT, "goodput: interruptions over the run, unexpected and planned");
CS_METRIC(unexpected_interruptions, COUNT, "goodput: unexpected interruptions over the run");
CS_METRIC(mtbf_s, SECONDS, "goodput: the job's mean time between unexpected interruptions");
CS_METRIC(checkpoint_interval_s, SECONDS, "goodput: productive time between checkpoints (the optimum when searched)");
CS_METRIC(checkpoint_write_s, SECONDS, "goodput: time to write one checkpoint to storage");
CS_METRIC(lost_gpu_hours_redone, COUNT, "goodput: GPU-hours of work thrown away by failures");
CS_METRIC(lost_gpu_hours_restarts, COUNT, "goodput: GPU-hours spent detecting, restarting and waiting for nodes");
CS_METRIC(lost_gpu_hours_checkpoints, COUNT, "goodput: GPU-hours stalled for checkpoints");

} // namespace metric

/** The declared metrics of a goodput.json, by name (for sweep rows). */
std::vector<std::pair<std::string, double>> goodput_metrics(const nlohmann::json& goodput);

} // namespace cs
