#include "base/heap_policy.hpp"

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
#endif
}

// A 160 x 8 GPU tree all-reduce starts ~40,000 actors without guard pages: from the heap their calloc'd stacks took
// 20 GB before the kernel stopped it; mapped, only the pages a stack touches are ever resident.
void map_large_blocks_lazily()
{
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

} // namespace cs
