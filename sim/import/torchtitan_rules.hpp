// torchtitan's own rules that `clustersim import` follows: which preset each of its model flavors is, and how its
// releases cut a pipelined model into stages (the December 2024 release's even split, the newer split by weight, the
// split points a TOML names).
#pragma once

#include <string>
#include <toml++/toml.h>
#include <vector>

namespace cs {

/** A torchtitan model flavor that has a preset here. */
struct TorchtitanFlavor {
  const char* preset;
  bool moe; // its layers route tokens to experts
};

/** The preset of torchtitan's model `name` in `flavor` (torchtitan/models/<name>/__init__.py), or nullptr, with the
 *  known ones listed in `known`. */
const TorchtitanFlavor* torchtitan_flavor(const std::string& name, const std::string& flavor, std::string& known);

/** The layers of each of `stages` stages as torchtitan 9dec370 (2024-12-26) split `layers` without split points
 *  (generate_split_points): the first stage the base share, the middle stages one more while the remainder lasts, the
 *  last what is left. Needs 0 < stages <= layers. */
std::vector<int> torchtitan_even_split(int layers, int stages);

/** The layers of each of `stages` stages as torchtitan's releases since April 2025 split `layers` by weight
 *  (generate_llm_fqn_per_model_part): the embedding counts as `first_less` layers of the first stage and the output
 *  layer as `last_less` of the last, the effective layers are shared evenly and the first stages take the remainder.
 *  Empty when torchtitan refuses the split (more stages than effective layers, or a stage whose share is smaller than
 *  what the ends take from it). */
std::vector<int> torchtitan_weighted_split(int layers, int stages, int first_less, int last_less);

/** What torchtitan's embedding and output layer weigh in its split by weight, in layers
 *  (pipeline_parallel_first_stage_less_layers and _last_stage_less_layers; 1 each unless set). */
struct TorchtitanWeights {
  int first = 1, last = 1;
};

/** The stages of a newer release's split by weight on `pp` ranks: `layers_per_stage` (0: unset) sets the count, the
 *  effective layers over it rounded up, which must make one stage a rank under a single-stage schedule and two or
 *  more under a looped one; unset, `default_per_rank` a rank. Throws std::invalid_argument saying why a split cannot
 *  be made (naming `schedule`). */
std::vector<int> torchtitan_weighted_stages(int layers, int pp, int default_per_rank, TorchtitanWeights weights,
                                            int layers_per_stage, const std::string& schedule);

/** The layers of each stage that pipeline_parallel_split_points make ("layers.N", each the first layer of a stage
 *  after the first); throws InputError at `source` and the offending entry when it is not a list of such names rising
 *  within the model's `layers`. */
std::vector<int> torchtitan_split_points(const toml::node& points, int layers, const std::string& source);

/** The names of a comma-separated list as torchtitan's command line gives them ("float8,mx"), blanks around each
 *  dropped. */
std::vector<std::string> torchtitan_list(const std::string& list);

} // namespace cs
