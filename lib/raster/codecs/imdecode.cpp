// sv's image codec module: OpenCV's imgcodecs behind one C entry point, loaded by
// lib/raster/image.cpp only when an input is not a PNG. imgcodecs links some 120 shared
// libraries (GDAL, GDCM, HDF5, Poppler...) whose loading and relocation cost every process
// about 40 ms before it does anything; PNG, what nearly every run reads, goes through libpng.
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>

namespace {

// "... error: (-2:Unspecified error) Unexpected end of input stream in function 'f'" -> the middle.
std::string reason(std::string s) {
  s.resize(std::min(s.find('\n'), s.size()));
  auto open = s.find("error: (");
  auto close = open == std::string::npos ? open : s.find(") ", open);
  if (close == std::string::npos) return "";
  s = s.substr(close + 2);
  return s.rfind("in function", 0) == 0 ? "" : s.substr(0, s.find(" in function"));
}

}  // namespace

// Decodes size bytes with cv::imdecode(flags) into *out. Returns 0 on success; otherwise 1
// with why (if OpenCV said) in err, NUL-terminated and cut to err_size.
// The executables link OpenCV's core and the C++ runtime statically (SV_STATIC_LIBS in
// CMakeLists.txt), so this module's are second copies: OpenCV's decoders report failures on this
// copy's std::cerr and log, where the caller's settings do not reach, so both are diverted here
// (the error contract allows sv's one line on stderr). *out's buffer stays with the allocator
// its header names, this copy's, whichever side releases it.
extern "C" int sv_imdecode(const unsigned char* data, int size, int flags, cv::Mat* out, char* err, size_t err_size) {
  const auto level = cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  std::ostringstream said;
  std::streambuf* cerr_buf = std::cerr.rdbuf(said.rdbuf());
  int status = 1;
  std::string why;
  try {
    *out = cv::imdecode(cv::Mat(1, size, CV_8U, const_cast<unsigned char*>(data)), flags);
    status = out->empty() ? 1 : 0;
  } catch (const cv::Exception& e) {
    why = e.err;
  }
  std::cerr.rdbuf(cerr_buf);
  cv::utils::logging::setLogLevel(level);
  if (why.empty()) why = reason(said.str());
  if (status != 0 && err_size > 0) {
    std::strncpy(err, why.c_str(), err_size - 1);
    err[err_size - 1] = '\0';
  }
  return status;
}
