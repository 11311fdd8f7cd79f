// How the process's heap hands memory back: kept for reuse by large task graphs, mapped lazily for SimGrid's stacks.
#pragma once

namespace cs {

/** Keeps freed blocks up to 1 GiB in the heap instead of unmapping them, so that the next pass over a task graph
 *  reuses pages rather than faulting in fresh ones, and reserves the heap's next 768 MiB on transparent huge pages
 *  (advised, never touched), so that fresh pages fault in 2 MiB at a time (docs/performance.md). Called once at start
 *  by the CLI. */
void keep_freed_memory();

/** Back to glibc's ways for a run of tens of thousands of SimGrid actors: blocks of 1 MiB and more mapped on their
 *  own, zero-filled lazily by the kernel, and freed memory handed back. With guard pages off SimGrid allocates the
 *  stacks with calloc; from the heap, calloc would clear every 8 MiB stack. */
void map_large_blocks_lazily();

} // namespace cs
