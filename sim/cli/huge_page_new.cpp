// clustersim's global operator new: malloc, with blocks of 4 MiB and more advised onto transparent huge pages.
//
// A large run builds and lowers task graphs of millions of tasks: vectors of tens to hundreds of MB, touched once
// each pass. With 4 KiB pages every first touch is a page fault, and on the virtual machines we measure on a fault
// costs microseconds: the 405B plan's run spent a third of its wall time in them. Where the kernel offers huge pages
// on request (transparent_hugepage "madvise", the common default) a 2 MiB fault replaces 512 small ones; elsewhere
// the advice is ignored. Only this executable replaces operator new; libraries and tests keep the default.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <sys/mman.h>

// Under AddressSanitizer the sanitizer's runtime replaces the allocation functions itself. Replacing some of them
// here would pair its nothrow operator new (std::stable_sort's buffer) with this free, which it reports as a
// mismatch on every run (make sanitize), and would hide its own checks: sanitizer builds keep its.
#if defined(__SANITIZE_ADDRESS__)
#define CS_OWN_OPERATOR_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CS_OWN_OPERATOR_NEW 0
#endif
#endif
#ifndef CS_OWN_OPERATOR_NEW
#define CS_OWN_OPERATOR_NEW 1
#endif

#if CS_OWN_OPERATOR_NEW
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAdviseFrom = 2 * kHugePage; // smaller blocks rarely hold a whole aligned huge page

void advise_huge_pages(void* block, std::size_t size)
{
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + size) & ~(kHugePage - 1);
  if (last > first)
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE); // advice: failure changes nothing
#else
  (void)block;
  (void)size;
#endif
}

} // namespace

void* operator new(std::size_t size)
{
  for (;;) {
    if (void* block = std::malloc(size == 0 ? 1 : size)) {
      if (size >= kAdviseFrom)
        advise_huge_pages(block, size);
      return block;
    }
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr)
      throw std::bad_alloc();
    handler();
  }
}

void operator delete(void* block) noexcept { std::free(block); }

void operator delete(void* block, std::size_t) noexcept { std::free(block); }
#endif
