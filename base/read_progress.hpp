// How far a long read is (items of a streamed JSON array parsed so far), for the progress line of long commands.
#pragma once

#include <atomic>
#include <cstddef>

namespace cs {

/** Process-wide counter the streaming readers advance and a reporter thread reads (relaxed: a display only). */
struct ReadProgress {
  std::atomic<std::size_t> items{0};
};

inline ReadProgress& read_progress()
{
  static ReadProgress progress;
  return progress;
}

} // namespace cs
