// Writing a command's outputs as one set: checked before the run, staged, renamed into place, stale files removed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cs {

/** Refuses (InputError at the command line, exit 2) an output folder that cannot be made or written: a path that
 *  is a file, one under a file, or one whose nearest existing folder is not writable. Call before simulating. */
void check_output_dir(const std::string& dir, const std::string& option = "--out");

/** Writes `files` (name, text) into `dir` as one set: every file is staged under a temporary name, then all are
 *  renamed into place; on a failure the staged files are removed and nothing of the new set is left. Files the
 *  previous run in `dir` wrote (listed in its `.clustersim-outputs` manifest) and this one does not are removed,
 *  so no stale trace.json sits beside a new report. SIGINT and SIGTERM wait until the set is complete. */
void write_output_set(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

} // namespace cs
