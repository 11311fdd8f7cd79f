#include "workloads/collective/collective_sweep.hpp"

#include <algorithm>

namespace cs {

std::vector<double> sweep_sizes(const CollectiveParams& p)
{
  std::vector<double> sizes;
  double s = p.min_bytes.value;
  if (s <= 0) {
    sizes.push_back(0);
    s = 1024;
  }
  for (; s <= p.max_bytes.value * (1 + 1e-12); s *= p.factor)
    sizes.push_back(std::round(s));
  return sizes;
}

bool closed_forms_fit(const NetworkParams& network)
{
  return uniform_fabric(network) && network.kind != NetworkKind::RAIL_OPTIMIZED;
}

CollectiveSweep build_collective_sweep(const CollectiveParams& params, const PlatformSpec& platform, int ranks,
                                       SweepPricing pricing, const StragglerModel* stragglers)
{
  CollectiveSweep out;
  for (int r = 0; r < ranks; ++r)
    out.hosts.push_back(r);
  out.sizes = sweep_sizes(params);
  const GroupShape shape = group_shape(platform, out.hosts);
  StreamPool pool(out.graph);
  StreamPool counted_pool(out.expanded);
  const int marker_stream = out.graph.add_stream(0, "sweep");
  std::vector<int> late_stream(static_cast<std::size_t>(ranks), -1); // stragglers: where a rank's lateness waits
  int previous = -1;
  for (std::size_t i = 0; i < out.sizes.size(); ++i) {
    CollectiveRequest req;
    req.kind = params.op;
    req.algorithm = params.algorithm;
    req.hosts = out.hosts;
    req.bytes = out.sizes[i];
    req.root = params.root;
    req.labels = TaskLabels{static_cast<int>(i), -1, -1, -1, out.graph.intern("collective")};
    CollectiveChoice choice = choose_collective(params.op, params.algorithm, req.bytes, shape);
    std::vector<double> late(static_cast<std::size_t>(ranks), 0.0);
    for (int r = 0; stragglers && r < ranks; ++r)
      late[r] = stragglers->delay(r, static_cast<long long>(i));
    int end = -1;
    if (pricing == SweepPricing::CLOSED_FORM ||
        (pricing == SweepPricing::CLOSED_FORM_WHERE_EXACT && closed_form_exact(choice.algorithm))) {
      ++out.closed_form_sizes;
      end = out.graph.add_delay(marker_stream, choice.seconds + *std::max_element(late.begin(), late.end()),
                                params.op + "/" + choice.algorithm + "/" + choice.protocol.name, req.labels);
      expand_collective(out.expanded, counted_pool, platform, req, choice); // counted, not run
    } else {
      req.ready.assign(ranks, previous);
      for (int r = 0; r < ranks; ++r)
        if (late[r] > 0) {
          if (late_stream[r] < 0)
            late_stream[r] = out.graph.add_stream(r, "straggler");
          req.ready[r] = out.graph.add_delay(late_stream[r], late[r], "straggler", req.labels);
          if (previous >= 0)
            out.graph.add_dependency(previous, req.ready[r]);
        }
      auto done = expand_collective(out.graph, pool, platform, req, choice);
      end = out.graph.add_delay(marker_stream, 0.0, "end-of-size", req.labels);
      for (const auto& tasks : done)
        for (int t : tasks)
          out.graph.add_dependency(t, end);
    }
    out.choices.push_back(choice);
    out.start_marker.push_back(previous);
    out.end_marker.push_back(end);
    previous = end;
  }
  out.graph.finalize();
  out.expanded.finalize();
  return out;
}

} // namespace cs
