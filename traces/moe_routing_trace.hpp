// Recorded MoE routing: a CSV of `iteration,layer,source_rank,expert,tokens` rows (docs/moe.md has the schema).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace cs {

struct RoutingTrace {
  std::string path;
  /** Tokens per (iteration, layer, source rank), per expert. */
  std::map<std::tuple<int, int, int>, std::map<int, double>> tokens;
  std::vector<int> iterations, layers; // distinct values, ascending
  int ranks = 0;                       // largest source rank + 1
  int max_expert = -1;
  int max_expert_line = 0, max_expert_column = 0; // where the largest expert id is (errors against a model)
};

/** Reads a routing trace; '#' lines are comments and the first other line may be a header. Throws InputError at the
 * offending row and column for a malformed row (fields missing, not whole numbers, negative, tokens not finite). */
RoutingTrace read_routing_trace(const std::string& path);

} // namespace cs
