// Reads a torchtitan training configuration (train_configs/*.toml: [model], [training], [parallelism],
// [activation_checkpoint], [float8]) into scenario keys.
#pragma once

#include "sim/import/imported_run.hpp"

#include <string>

namespace cs {

/** Parses `text` from file `source` with toml++; a TOML syntax error or an unreadable value throws InputError at its
 *  line and column; keys it does not model are warned about by name. */
ImportedRun read_torchtitan_toml(const std::string& text, const std::string& source);

/** Whether `text` reads as a torchtitan configuration (TOML with a [model] or [parallelism] table). */
bool looks_like_torchtitan(const std::string& text);

} // namespace cs
