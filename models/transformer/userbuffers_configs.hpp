// Transformer Engine userbuffers configurations by name, as Megatron-Bridge and NeMo ship them (tp_overlap).
#pragma once

#include "models/transformer/framework.hpp"

#include <map>
#include <string>

namespace cs {

/** The overlaps of each named configuration by layer name: Megatron-Bridge's userbuffers_* (src/megatron/bridge/
 *  training/comm_overlap.py) and NeMo-Framework-Launcher's ub_cfg_* (launcher_scripts/conf/training/tp_overlap/). */
const std::map<std::string, std::map<std::string, UbOverlap>>& userbuffers_configs();

} // namespace cs
