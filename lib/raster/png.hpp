// PNG in and out through libpng, with the error contract of sv: any unreadable input is
// refused with Error(Code::invalid_raster) and a one-line message, never a crash.
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <string_view>

namespace sv {

// Largest side a PNG header may claim. Independent of max_pixels so that a long thin strip is
// still bounded; libpng's own default user limit is the same.
constexpr long long kMaxPngSide = 1'000'000;
// Most pixels a decoder is asked for by default.
constexpr long long kMaxPngPixels = 100'000'000;

// Decodes any PNG (gray 1/2/4/8/16 bit, gray+alpha, RGB and RGBA 8/16 bit, palette with or
// without tRNS, interlaced or not) to CV_8UC1 luminance (Rec. 601 weights, as OpenCV's
// cvtColor), alpha composited on white. The size in the IHDR chunk is checked before libpng
// reads on: width * height > max_pixels or a side > kMaxPngSide is refused.
cv::Mat decode_png(std::string_view bytes, long long max_pixels = kMaxPngPixels);

// The size the IHDR chunk claims, {width, height}, checked like decode_png (the rest of the
// file is not read).
cv::Size png_size(std::string_view bytes, long long max_pixels = kMaxPngPixels);

// Rec. 601 luminance of 8-bit samples and compositing on white by an 8-bit alpha, in integers,
// shared by every decoder so that the same pixels give the same gray whatever the format.
inline unsigned luma601(unsigned r, unsigned g, unsigned b) { return (299u * r + 587u * g + 114u * b + 500u) / 1000u; }
inline unsigned char on_white(unsigned y, unsigned a) {
  return static_cast<unsigned char>((y * a + 255u * (255u - a) + 127u) / 255u);
}

// Encodes CV_8UC1 as an 8-bit gray PNG and CV_8UC3 (BGR, OpenCV's order) as an 8-bit RGB
// PNG. No time or text chunks, so the bytes depend on the pixels only.
std::string encode_png_gray(const cv::Mat& gray);
std::string encode_png_rgb(const cv::Mat& bgr);

}  // namespace sv
