#include "workloads/training/stage_partition.hpp"

#include <stdexcept>

namespace cs {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Layers per device when the embedding's device and the output layer's are two: in `role` order (the embedding's
// device, the devices between, the output layer's). Choose how many layers the end devices keep so that the slowest
// device is fastest (ties: the more even split); the devices between share the rest evenly.
std::vector<int> balance_two_ends(int layers, int pp, int v, double layer_s, double head_s, double embedding_s)
{
  // Layers on the first device when `rest` layers go to the first pp - 1 devices, and the slowest of those.
  auto first_of = [&](int rest, double* slowest) {
    if (pp == 2 || embedding_s <= 0) { // the first device is one of pp - 1 even shares
      const int first = pp == 2 ? rest : ceil_div(rest, pp - 1);
      *slowest = first * layer_s + embedding_s;
      return first;
    }
    int pick = v;
    *slowest = INFINITY;
    for (int first = v; first <= rest - (pp - 2) * v; ++first) {
      const double t = std::max(first * layer_s + embedding_s, ceil_div(rest - first, pp - 2) * layer_s);
      if (t <= *slowest + 1e-15) {
        *slowest = std::min(*slowest, t);
        pick = first;
      }
    }
    return pick;
  };
  int best_last = v, best_first = 0;
  double best = INFINITY;
  for (int last = v; last <= layers - (pp - 1) * v; ++last) {
    double front = 0;
    const int first = first_of(layers - last, &front);
    const double slowest = std::max(front, last * layer_s + head_s);
    if (slowest <= best + 1e-15) {
      best = std::min(best, slowest);
      best_last = last;
      best_first = first;
    }
  }
  std::vector<int> role(pp);
  role[0] = best_first;
  role[pp - 1] = best_last;
  const int middle = layers - best_first - best_last;
  for (int d = 1; d < pp - 1; ++d)
    role[d] = middle / (pp - 2) + (d - 1 < middle % (pp - 2) ? 1 : 0);
  return role;
}

// Layers per device when one device runs both the embedding and the output layer (a V-shaped map): in `role` order
// (that device, then the others). It keeps the number of layers that makes the slowest device fastest (ties: more).
std::vector<int> balance_one_end(int layers, int pp, int v, double layer_s, double ends_s)
{
  int pick = v;
  double best = INFINITY;
  for (int own = v; own <= layers - (pp - 1) * v; ++own) {
    const double slowest = std::max(own * layer_s + ends_s, ceil_div(layers - own, pp - 1) * layer_s);
    if (slowest <= best + 1e-15) {
      best = std::min(best, slowest);
      pick = own;
    }
  }
  std::vector<int> role(pp);
  role[0] = pick;
  const int rest = layers - pick;
  for (int d = 1; d < pp; ++d)
    role[d] = rest / (pp - 1) + (d - 1 < rest % (pp - 1) ? 1 : 0);
  return role;
}

} // namespace

std::vector<int> partition_layers(int layers, const StageMap& map, double layer_s, double head_s, bool balanced,
                                  double embedding_s)
{
  if (map.chains() > 1) { // each copy of the model is cut alike, one stage a device along its chain
    const std::vector<int> chain =
        partition_layers(layers, StageMap::interleaved(map.chain_length(), 1), layer_s, head_s, balanced, embedding_s);
    std::vector<int> out;
    for (int c = 0; c < map.chains(); ++c)
      out.insert(out.end(), chain.begin(), chain.end());
    return out;
  }
  const int pp = map.devices(), v = map.chunks(), stages = map.stages();
  std::vector<int> out(stages, layers / stages);
  if (!balanced || pp == 1) {
    for (int s = 0; s < layers % stages; ++s)
      ++out[s];
    return out;
  }
  // Devices by role: the embedding's first, the output layer's last (or first, when it runs both), the rest between
  // in device order.
  const int first = map.device_of(0), last = map.device_of(stages - 1);
  std::vector<int> devices{first};
  for (int d = 0; d < pp; ++d)
    if (d != first && d != last)
      devices.push_back(d);
  if (last != first)
    devices.push_back(last);
  const std::vector<int> role = first != last ? balance_two_ends(layers, pp, v, layer_s, head_s, embedding_s)
                                              : balance_one_end(layers, pp, v, layer_s, head_s + embedding_s);
  // Each device spreads its layers over its chunks; earlier chunks take any remainder.
  for (int k = 0; k < pp; ++k)
    for (int c = 0; c < v; ++c)
      out[map.stage(devices[k], c)] = role[k] / v + (c < role[k] % v ? 1 : 0);
  return out;
}

std::vector<int> stage_layer_counts(const TrainingParams& params, const StageMap& map, double layer_s, double head_s,
                                    double embedding_s)
{
  const ParallelParams& par = params.parallel;
  const int layers = params.model.layers, stages = map.stages(), chain = map.chain_length();
  if (!par.stage_layers.empty()) {
    if (static_cast<int>(par.stage_layers.size()) != chain)
      throw std::invalid_argument("stage_layers needs one entry per virtual stage of a copy of the model");
    std::vector<int> out;
    for (int c = 0; c < map.chains(); ++c)
      out.insert(out.end(), par.stage_layers.begin(), par.stage_layers.end());
    return out;
  }
  const int slots = par.pipeline_slots(layers);
  if (slots == layers)
    return partition_layers(layers, map, layer_s, head_s, par.partition == StagePartition::BALANCED, embedding_s);
  // The embedding and the loss hold a slot each on their stages.
  std::vector<int> out(stages, slots / chain);
  for (int vs = 0; vs < stages; ++vs)
    out[vs] -= (map.chain_first(vs) && par.account_for_embedding ? 1 : 0) +
               (map.chain_last(vs) && par.account_for_loss ? 1 : 0);
  return out;
}

} // namespace cs
