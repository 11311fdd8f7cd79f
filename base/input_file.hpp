// Opening user-named input files safely: regular files only, within a size limit, errors with a position.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace cs {

/** Largest scenario, profile or measurement file read whole (documents, not data: 64 MiB). */
inline constexpr std::uintmax_t kMaxDocumentBytes = 64ull << 20;

/** Throws InputError(path, 0, 0, ...) unless `path` names a readable regular file (not a folder, device, FIFO:
 *  `/dev/zero` would never end) of at most `max_bytes`. `what` names the file's role in the message. */
void check_input_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes = UINTMAX_MAX);

/** Opens a checked input file for streaming (traces: any size). */
std::ifstream open_input_file(const std::string& path, const std::string& what);

} // namespace cs
