#include "base/heap_policy.hpp"

#include <cstdint>
#include <cstdlib> // defines __GLIBC__ on glibc
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace cs {

// Building and lowering a task graph grows vectors to tens of MB and frees them between passes. By default glibc maps
// such blocks fresh and unmaps them on free, so every pass paid a page fault per 4 KiB it touched: the 145.6B
// reference run spent about a quarter of its wall time there.
void keep_freed_memory()
{
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
#ifdef MADV_HUGEPAGE
  // Fresh pages still fault once each, about 7 us on these VMs: a block advised onto huge pages and freed untouched
  // stays the heap's top, which the next allocations grow into 2 MiB at a time.
  constexpr std::size_t arena = std::size_t{768} << 20, huge = std::size_t{2} << 20;
  if (void* block = std::malloc(arena)) {
    const auto begin = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1), last = (begin + arena) & ~(huge - 1);
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
    std::free(block);
  }
#endif
#endif
}

// A 160 x 8 GPU tree all-reduce starts ~40,000 actors without guard pages: from the heap their calloc'd stacks took
// 20 GB before the kernel stopped it; mapped, only the pages a stack touches are ever resident. Keeping freed memory
// too took that run from 0.66 to 1.6 GB, so trimming returns to glibc's default as well.
void map_large_blocks_lazily()
{
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 10); // glibc's defaults: tens of thousands of actors' memory is handed back
  mallopt(M_TOP_PAD, 128 << 10);
#endif
}

} // namespace cs
