// The executables' allocator: mimalloc, its memory on transparent huge pages.
//
// A process touches fresh memory page by page, and on a virtual machine each 4 KiB page fault
// costs 10-25 us: a 512x512 drawing's sv-skeleton took 1,490 faults, a third of its run. On
// 2 MiB pages the same memory takes a fault per 2 MiB (650 faults in all, most of them the
// dynamic loader's). Linux gives such pages to
// memory that asks (madvise mode, the usual default); mimalloc asks when large OS pages are on.
#include <mimalloc.h>

namespace {

// The option must be set before mimalloc reserves its first segment, which happens in the first
// shared library constructor that allocates (libstdc++'s): .preinit_array runs before them all.
// Setting an option allocates nothing.
void use_large_pages(int, char**, char**) { mi_option_enable(mi_option_large_os_pages); }

[[gnu::used, gnu::section(".preinit_array")]] void (*const preinit)(int, char**, char**) = use_large_pages;

}  // namespace
