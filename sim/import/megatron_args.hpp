// Reads a Megatron-LM / Megatron-Core argument list (the flags of pretrain_gpt.py, optionally behind torchrun's) or
// Megatron-Bridge recipe overrides (model.tensor_model_parallel_size=4) into scenario keys.
#pragma once

#include "sim/import/imported_run.hpp"

#include <string>

namespace cs {

/** Parses `text` (shell-like: whitespace-separated, backslash continuations, # comments, quotes) from file `source`.
 *  Values that cannot be read throw InputError at their line and column; flags it does not model are warned about
 *  by name, never dropped silently. */
ImportedRun read_megatron_args(const std::string& text, const std::string& source);

} // namespace cs
