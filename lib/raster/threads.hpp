// How many threads OpenCV's loops use. The first parallel loop of a process starts a TBB worker
// pool (a thread, TBB reading /proc and sysfs, workers spinning while they wait for work): 2 to 3
// ms, more than a drawing-sized image ever wins back on a 2-core machine.
#pragma once
#include <cstddef>

namespace sv {

// Above this many pixels OpenCV's loops use every core. Measured on 2 cores with sv-skeleton:
// an 8192x8192 drawing traces 12% faster threaded, a 4000x3000 photo and a 2048x2048 drawing
// no faster. Output is the same either way.
constexpr size_t kParallelPixels = 16'000'000;

// Sets OpenCV's loops for work on an image of this many pixels: in the calling thread at or
// below kParallelPixels, on every core above. Cheap when nothing changes.
void raster_threads_for(size_t pixels);

}  // namespace sv
