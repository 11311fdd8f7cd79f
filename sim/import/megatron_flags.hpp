// Megatron-LM's arguments (megatron/training/arguments.py) as tables: which take no value, which shape a step and
// the scenario key each sets, and which change nothing a step costs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>

namespace cs {

/** Flags that take no value (store_true), whether modelled or not. */
bool megatron_switch(const std::string& flag);
/** The command-line argument of a Megatron-Bridge config field (dashed) where it is spelt otherwise, or nullptr. */
const char* argument_of_field(const std::string& field);
/** The switch a Megatron-Bridge field set false reads as (a field on by default has a --no- switch; apply_rope_fusion
 *  is --no-rope-fusion), or "" when false just leaves a switch off. */
std::string switch_turned_off(const std::string& field);
/** torchrun's own flags before the script (--nnodes, --nproc_per_node, rendezvous): they give the world size. */
bool launcher_flag(const std::string& flag);
/** Flags that change nothing a step costs: optimisation, data, checkpoints, logging, initialisation, loss weights. */
const std::set<std::string>& no_step_effect_flags();
/** Flags taking a positive whole number, and the scenario key it sets. */
const std::map<std::string, const char*>& size_flags();
/** Switches that set a scenario key, and the value they set. */
const std::map<std::string, std::pair<const char*, YAML::Node>>& switch_flags();
/** --window-size's value, "(left,right)", "[left, right]" or "left,right": whether it parses, into left and right. */
bool parse_window_size(const std::string& text, int& left, int& right);
/** The dispatcher Megatron-Core runs for --moe-token-dispatcher-type `type` ("" = its default, allgather) and, with
 *  flex, --moe-flex-dispatcher-backend `backend` ("" = its default, deepep). */
std::string megatron_dispatcher(const std::string& type, const std::string& backend);

/** Flags with spelt values: the scenario key and Megatron's spelling to ours. */
const std::map<std::string, std::pair<const char*, std::map<std::string, std::string>>>& choice_flags();

} // namespace cs
