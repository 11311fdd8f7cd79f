// How the process's heap hands memory back: kept for reuse by large task graphs, mapped lazily for SimGrid's stacks.
#pragma once

namespace cs {

/** Keeps freed blocks up to 1 GiB in the heap instead of unmapping them, so that the next pass over a task graph
 *  reuses pages rather than faulting in fresh ones (docs/performance.md). Called once at start by the CLI. */
void keep_freed_memory();

/** Maps blocks of 1 MiB and more on their own again, zero-filled lazily by the kernel. SimGrid allocates actor stacks
 *  with calloc when guard pages are off; from the heap, calloc would clear tens of thousands of 8 MiB stacks. */
void map_large_blocks_lazily();

} // namespace cs
