#include "raster/threads.hpp"

#include <opencv2/core/parallel/parallel_backend.hpp>
#include <opencv2/core/utility.hpp>

namespace sv {

void raster_threads_for(size_t pixels) {
  static int current = [] {
    // OpenCV's default backend object answers cv::getNumThreads(), which connectedComponents asks
    // even with threads off, by asking TBB: every sv-skeleton loaded libtbb.so and its libstdc++.so
    // for that question (4 of the 18 ms a 512x512 drawing took). Without the object OpenCV answers
    // from its own count, and runs the threaded case on TBB through its built-in code.
    cv::parallel::setParallelForBackend(std::shared_ptr<cv::parallel::ParallelForAPI>(), false);
    return 1;  // neither value below: the first call always sets it
  }();
  // 0: no parallel loops at all (1 would still start the pool); -1: OpenCV's default, every core.
  const int wanted = pixels > kParallelPixels ? -1 : 0;
  if (wanted == current) return;
  cv::setNumThreads(wanted);
  current = wanted;
}

}  // namespace sv
