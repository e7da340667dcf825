// encode_view_png (render/view.hpp): a minimal libpng writer for the views.
#include <png.h>

#include <csetjmp>
#include <opencv2/core.hpp>
#include <string>

#include "core/error.hpp"
#include "render/view.hpp"

namespace sv {

namespace {

void append(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

}  // namespace

std::string encode_view_png(const cv::Mat& bgr) {
  if (bgr.empty() || bgr.type() != CV_8UC3) throw Error(Code::internal, "png: expected an 8-bit BGR image");
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  // libpng reports errors by longjmp; nothing with a destructor lives between here and there.
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(Code::internal, "png: could not encode the view");
  }
  png_set_write_fn(png, &out, append, nullptr);
  png_set_IHDR(png, info, bgr.cols, bgr.rows, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_bgr(png);  // rows are written as OpenCV stores them
  png_write_info(png, info);
  for (int y = 0; y < bgr.rows; ++y) png_write_row(png, bgr.ptr<png_byte>(y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace sv
