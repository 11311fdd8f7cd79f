// `trace`: replays recorded routing (iteration, layer, source rank, expert, tokens). Iterations past the trace's
// repeat it from the start; a layer the trace lacks takes the trace's layers in turn; a rank's tokens are split
// evenly over its samples and scaled to this run's tokens per rank (so a trace from another batch size keeps its
// shape).
#include "base/input_error.hpp"
#include "models/moe/moe_routing.hpp"
#include "traces/moe_routing_trace.hpp"

#include <filesystem>
#include <memory>

namespace cs {
namespace {

class TraceRouting : public RoutingModel {
public:
  void configure(ObjectReader& r) override
  {
    r.required("file", file_, "CSV 'iteration,layer,source_rank,expert,tokens' (relative to the scenario)");
    if (r.describing())
      return;
    std::filesystem::path p(file_);
    if (p.is_relative() && !r.source_file().empty())
      p = std::filesystem::path(r.source_file()).parent_path() / p;
    trace_ = std::make_shared<RoutingTrace>(read_routing_trace(p.string()));
  }
  Routing route(const RoutingRequest& q) const override
  {
    const RoutingTrace& t = *trace_;
    if (t.max_expert >= q.experts)
      throw InputError(t.path, t.max_expert_line, t.max_expert_column,
                       "expert " + std::to_string(t.max_expert) + " is past the model's " + std::to_string(q.experts) +
                           " experts");
    const int it = t.iterations[q.iteration % t.iterations.size()];
    const bool has_layer = std::binary_search(t.layers.begin(), t.layers.end(), q.layer);
    const int layer = has_layer ? q.layer : t.layers[q.layer % t.layers.size()];
    Routing out;
    out.tokens.assign(static_cast<std::size_t>(q.ranks) * q.samples_per_rank, std::vector<double>(q.experts, 0.0));
    const double want = q.tokens_per_sample * q.top_k * q.samples_per_rank;
    for (int r = 0; r < q.ranks; ++r) {
      const int source = (r + q.group * q.ranks) % std::max(1, t.ranks);
      const auto found = t.tokens.find({it, layer, source}); // none: an even split
      double sum = 0;
      if (found != t.tokens.end())
        for (const auto& [e, n] : found->second)
          sum += n;
      for (int s = 0; s < q.samples_per_rank; ++s) {
        auto& row = out.tokens[static_cast<std::size_t>(r) * q.samples_per_rank + s];
        if (sum <= 0) {
          std::fill(row.begin(), row.end(), want / q.samples_per_rank / q.experts);
          continue;
        }
        for (const auto& [e, n] : found->second)
          row[e] = n / sum * want / q.samples_per_rank;
      }
    }
    return out;
  }

private:
  std::string file_;
  std::shared_ptr<const RoutingTrace> trace_;
};

} // namespace

CS_REGISTER_POLICY(RoutingModel, TraceRouting, "moe_routing", "trace",
                   "replay recorded routing: CSV iteration,layer,source_rank,expert,tokens");

} // namespace cs
