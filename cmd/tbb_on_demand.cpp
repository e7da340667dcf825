// TBB's entry points, as OpenCV's core archive calls them for its parallel loops, loading
// libtbb.so on the first call. sv runs those loops threaded only on images above
// kParallelPixels (raster/threads.hpp); every other process would load TBB for nothing, and with
// it libstdc++.so, which the executables carry statically instead (cmd/CMakeLists.txt): on a
// 2-core virtual machine, 4 of the 10.5 ms sv-skeleton took to start. TBB, loaded RTLD_LOCAL,
// binds to its own libstdc++.so; the executables export none of theirs (--exclude-libs), and
// OpenCV's loops catch their exceptions before TBB sees them.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <oneapi/tbb/cache_aligned_allocator.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

namespace {

#define SV_STR2(x) #x
#define SV_STR(x) SV_STR2(x)
constexpr const char* kLibrary = "libtbb.so." SV_STR(__TBB_BINARY_VERSION);

// Every entry point OpenCV's core names (nm -u libopencv_core.a), resolved together so that a
// missing one shows at the first parallel loop, whichever it is.
enum Fn {
  kAllocate, kAllocateData, kDeallocate, kCacheAlignedDeallocate, kInitializeContext, kDestroy, kReset,
  kCancelled, kInitializeArena, kTerminate, kExecute, kMaxConcurrency, kSpawn, kExecuteAndWait, kWait,
  kExecutionSlot, kNotifyWaiters, kCount
};
constexpr const char* kSymbols[kCount] = {
    "_ZN3tbb6detail2r18allocateERPNS0_2d117small_object_poolEm",
    "_ZN3tbb6detail2r18allocateERPNS0_2d117small_object_poolEmRKNS2_14execution_dataE",
    "_ZN3tbb6detail2r110deallocateERNS0_2d117small_object_poolEPvmRKNS2_14execution_dataE",
    "_ZN3tbb6detail2r124cache_aligned_deallocateEPv",
    "_ZN3tbb6detail2r110initializeERNS0_2d118task_group_contextE",
    "_ZN3tbb6detail2r17destroyERNS0_2d118task_group_contextE",
    "_ZN3tbb6detail2r15resetERNS0_2d118task_group_contextE",
    "_ZN3tbb6detail2r128is_group_execution_cancelledERNS0_2d118task_group_contextE",
    "_ZN3tbb6detail2r110initializeERNS0_2d115task_arena_baseE",
    "_ZN3tbb6detail2r19terminateERNS0_2d115task_arena_baseE",
    "_ZN3tbb6detail2r17executeERNS0_2d115task_arena_baseERNS2_13delegate_baseE",
    "_ZN3tbb6detail2r115max_concurrencyEPKNS0_2d115task_arena_baseE",
    "_ZN3tbb6detail2r15spawnERNS0_2d14taskERNS2_18task_group_contextE",
    "_ZN3tbb6detail2r116execute_and_waitERNS0_2d14taskERNS2_18task_group_contextERNS2_12wait_contextES6_",
    "_ZN3tbb6detail2r14waitERNS0_2d112wait_contextERNS2_18task_group_contextE",
    "_ZN3tbb6detail2r114execution_slotEPKNS0_2d114execution_dataE",
    "_ZN3tbb6detail2r114notify_waitersEm",
};

void* const* tbb_functions() {
  static void* const* table = [] {
    static void* fns[kCount];
    void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    for (int i = 0; i < kCount; ++i) {
      if (!lib || !(fns[i] = dlsym(lib, kSymbols[i]))) {
        std::fprintf(stderr, "sv: cannot load %s for OpenCV's parallel loops: %s\n", kLibrary, dlerror());
        std::abort();
      }
    }
    return fns;
  }();
  return table;
}

template <class F>
F* fn(Fn i) {
  return reinterpret_cast<F*>(tbb_functions()[i]);
}

}  // namespace

namespace tbb::detail::r1 {

void* allocate(d1::small_object_pool*& pool, std::size_t n) {
  return fn<void*(d1::small_object_pool*&, std::size_t)>(kAllocate)(pool, n);
}
void* allocate(d1::small_object_pool*& pool, std::size_t n, const d1::execution_data& ed) {
  return fn<void*(d1::small_object_pool*&, std::size_t, const d1::execution_data&)>(kAllocateData)(pool, n, ed);
}
void deallocate(d1::small_object_pool& pool, void* p, std::size_t n, const d1::execution_data& ed) {
  fn<void(d1::small_object_pool&, void*, std::size_t, const d1::execution_data&)>(kDeallocate)(pool, p, n, ed);
}
void cache_aligned_deallocate(void* p) { fn<void(void*)>(kCacheAlignedDeallocate)(p); }
void initialize(d1::task_group_context& c) { fn<void(d1::task_group_context&)>(kInitializeContext)(c); }
void destroy(d1::task_group_context& c) { fn<void(d1::task_group_context&)>(kDestroy)(c); }
void reset(d1::task_group_context& c) { fn<void(d1::task_group_context&)>(kReset)(c); }
bool is_group_execution_cancelled(d1::task_group_context& c) {
  return fn<bool(d1::task_group_context&)>(kCancelled)(c);
}
void initialize(d1::task_arena_base& a) { fn<void(d1::task_arena_base&)>(kInitializeArena)(a); }
void terminate(d1::task_arena_base& a) { fn<void(d1::task_arena_base&)>(kTerminate)(a); }
void execute(d1::task_arena_base& a, d1::delegate_base& d) {
  fn<void(d1::task_arena_base&, d1::delegate_base&)>(kExecute)(a, d);
}
int max_concurrency(const d1::task_arena_base* a) { return fn<int(const d1::task_arena_base*)>(kMaxConcurrency)(a); }
void spawn(d1::task& t, d1::task_group_context& c) { fn<void(d1::task&, d1::task_group_context&)>(kSpawn)(t, c); }
void execute_and_wait(d1::task& t, d1::task_group_context& tc, d1::wait_context& w, d1::task_group_context& wc) {
  fn<void(d1::task&, d1::task_group_context&, d1::wait_context&, d1::task_group_context&)>(kExecuteAndWait)(t, tc, w, wc);
}
void wait(d1::wait_context& w, d1::task_group_context& c) {
  fn<void(d1::wait_context&, d1::task_group_context&)>(kWait)(w, c);
}
d1::slot_id execution_slot(const d1::execution_data* ed) {
  return fn<d1::slot_id(const d1::execution_data*)>(kExecutionSlot)(ed);
}
void notify_waiters(std::uintptr_t addr) { fn<void(std::uintptr_t)>(kNotifyWaiters)(addr); }

}  // namespace tbb::detail::r1
