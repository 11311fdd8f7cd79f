// Reading a trace file that may be gzip- or zstd-compressed (profiler traces, job traces, Spark 3 event logs): the
// whole text, decompressed.
#pragma once

#include <cstddef>
#include <string>

namespace cs {

/** The most a trace file may inflate to (1 GiB): a bound on what a reader holds in memory at once. */
inline constexpr std::size_t kMaxTraceBytes = 1ull << 30;

/** The text of `path` (a regular file), inflated when it is gzip-compressed; InputError naming `what` when it
 *  cannot be opened, is corrupt or truncated, or inflates past `max_bytes`. */
std::string read_maybe_gzip(const std::string& path, const std::string& what, std::size_t max_bytes);

/** The first line of `path` (inflated when gzip-compressed), at most 64 KiB of it: enough to tell a format apart
 *  without reading the file. */
std::string first_line_maybe_gzip(const std::string& path, const std::string& what);

/** The first `bytes` (at most 1 MiB) of `path`, inflated when gzip-compressed; fewer when the file is shorter or
 *  corrupt past them. */
std::string head_maybe_gzip(const std::string& path, const std::string& what, std::size_t bytes);

} // namespace cs
