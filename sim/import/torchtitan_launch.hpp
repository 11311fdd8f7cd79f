// Reads a torchtitan launch command (torchrun ... train.py --job.config_file X.toml --section.key=value ..., or
// CONFIG_FILE=X.toml NGPU=8 ./run_train.sh ...) into scenario keys: the TOML it names with the command's overrides on
// top.
#pragma once

#include "sim/import/imported_run.hpp"

#include <string>

namespace cs {

/** Whether `text` is a torchtitan launch command: it names a configuration with --job.config_file (or
 *  --job.config-file) or CONFIG_FILE=. */
bool looks_like_torchtitan_launch(const std::string& text);

/** Reads the launch command `text` from file `source`. The TOML it names is looked for as given, beside `source`, and
 *  by its file name beside `source`; the command's --section.key overrides are applied to it as torchtitan applies
 *  them (a bare flag is true; a value takes the type the TOML gives the key); torchrun's --nnodes and
 *  --nproc_per_node, or run_train.sh's NGPU, give the GPUs. Bad input throws InputError at the word in the command,
 *  or at the key in the TOML. */
ImportedRun read_torchtitan_launch(const std::string& text, const std::string& source);

/** The same with the configuration given (`config_text`, as read from `config_path`) instead of looked for on disk;
 *  the command must still name one. */
ImportedRun read_torchtitan_launch(const std::string& text, const std::string& source, const std::string& config_text,
                                   const std::string& config_path);

} // namespace cs
