// Reads a Hugging Face model configuration (config.json of the Llama, Mistral, Qwen2/3, Mixtral, Qwen MoE, GPT-OSS and
// DeepSeek-V2/V3 families) into scenario keys: the model's shape, and a run to edit around it.
#pragma once

#include "sim/import/imported_run.hpp"

#include <string>

namespace cs {

/** Parses `text` from file `source`: a JSON syntax error, a value of the wrong type or range, or a model_type it does
 *  not read throws InputError at its line and column; keys that shape nothing a step costs are named in a warning. */
ImportedRun read_hf_config(const std::string& text, const std::string& source);

/** Whether `text` reads as a Hugging Face configuration (a JSON object with model_type). */
bool looks_like_hf_config(const std::string& text);

} // namespace cs
