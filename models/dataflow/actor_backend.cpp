#include "models/dataflow/actor_backend.hpp"

#include <fmt/format.h>

namespace cs {

void check_actor_backend(const WorkloadEnv& env, const std::string& kind)
{
  if (env.backend != Backend::ANALYTICAL)
    return;
  const NetworkParams& net = env.cluster->network;
  if (net.model != NetworkModel::IDEAL)
    throw env.error_at("cluster.network.model",
                       fmt::format("{} on the analytical backend shares links by max-min without TCP corrections "
                                   "(network.model ideal); run network.model {} on the simgrid backend",
                                   kind, spelling(kNetworkModels, net.model)));
}

} // namespace cs
