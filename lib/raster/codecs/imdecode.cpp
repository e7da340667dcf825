// sv's image codec module: OpenCV's imgcodecs behind one C entry point, loaded by
// lib/raster/image.cpp only when an input is not a PNG. imgcodecs links some 120 shared
// libraries (GDAL, GDCM, HDF5, Poppler...) whose loading and relocation cost every process
// about 40 ms before it does anything; PNG, what nearly every run reads, goes through libpng.
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstring>

// Decodes size bytes with cv::imdecode(flags) into *out. Returns 0 on success; otherwise 1
// with OpenCV's message (if it raised one) in err, NUL-terminated and cut to err_size.
// The executables link OpenCV's core statically (SV_STATIC_LIBS in CMakeLists.txt), so this
// module's shared core is a second copy: its log is silenced here, where the caller's setting
// does not reach, and *out's buffer stays with the allocator its header names, this copy's,
// whichever side releases it.
extern "C" int sv_imdecode(const unsigned char* data, int size, int flags, cv::Mat* out, char* err, size_t err_size) {
  const auto level = cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  int status = 1;
  try {
    *out = cv::imdecode(cv::Mat(1, size, CV_8U, const_cast<unsigned char*>(data)), flags);
    status = out->empty() ? 1 : 0;
  } catch (const cv::Exception& e) {
    if (err_size > 0) {
      std::strncpy(err, e.err.c_str(), err_size - 1);
      err[err_size - 1] = '\0';
    }
  }
  cv::utils::logging::setLogLevel(level);
  return status;
}
