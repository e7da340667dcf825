#include "raster/threads.hpp"

#include <opencv2/core/utility.hpp>

namespace sv {

void raster_threads_for(size_t pixels) {
  // 0: no parallel loops at all (1 would still start the pool); -1: OpenCV's default, every core.
  static int current = 1;  // neither: the first call always sets it
  const int wanted = pixels > kParallelPixels ? -1 : 0;
  if (wanted == current) return;
  cv::setNumThreads(wanted);
  current = wanted;
}

}  // namespace sv
