// decode_image over any bytes (PNG, JPEG, TIFF, BMP, WebP by magic): it either refuses with
// Error(invalid_raster) or returns a non-empty CV_8UC1 of the size image_size claims, and that
// image written with encode_png_gray reads back with the same pixels.
#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "raster/image.hpp"
#include "raster/png.hpp"

using svfuzz::broken;

namespace {

// Below the library's default (1e8) so that one input costs milliseconds, not seconds; the
// limit check itself is the same code whatever the bound.
constexpr long long kMaxPixels = 1 << 22;

bool same_pixels(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(a != b) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cv::Mat gray;
  try {
    gray = sv::decode_image(bytes, kMaxPixels);
  } catch (const sv::Error& e) {
    if (e.code() != sv::Code::invalid_raster) broken(std::string("refused with ") + sv::code_name(e.code()) + ": " + e.what());
    return 0;
  }
  if (gray.empty() || gray.type() != CV_8UC1) broken("decoded image is empty or not CV_8UC1");
  cv::Size claimed;
  try {
    claimed = sv::image_size(bytes, kMaxPixels);
  } catch (const sv::Error& e) {
    broken(std::string("decoded, but image_size refuses: ") + e.what());
  }
  // A JPEG's EXIF orientation may swap the sides.
  if (gray.size() != claimed && gray.size() != cv::Size(claimed.height, claimed.width))
    broken("decoded size differs from image_size");
  const std::string png = sv::encode_png_gray(gray);
  cv::Mat back;
  try {
    back = sv::decode_png(png, kMaxPixels);
  } catch (const sv::Error& e) {
    broken(std::string("encode_png_gray wrote a PNG decode_png refuses: ") + e.what());
  }
  if (!same_pixels(gray, back)) broken("PNG round trip changed the pixels");
  return 0;
}
