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

/** std::getline that holds at most `max_bytes` of a line: a longer line is read to its end but not kept (`line`
 *  empty, `too_long` set), so a 2.5 GiB line costs neither the memory nor a silent end of the read. False at the end
 *  of the stream. */
bool read_bounded_line(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long);

} // namespace cs
