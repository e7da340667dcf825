// Every raster a user has, decoded to the luminance sv traces: PNG through libpng (decode_png,
// so PNG results stay byte-identical), JPEG, TIFF, BMP and WebP through OpenCV's imgcodecs.
// Same error contract as png.hpp: anything unreadable is Error(Code::invalid_raster) with a
// one-line message, never a crash and never a stray line on stderr.
#pragma once
#include <opencv2/core.hpp>
#include <string_view>

#include "raster/png.hpp"

namespace sv {

// Largest side any header may claim, whatever the format (see kMaxPngSide).
constexpr long long kMaxImageSide = kMaxPngSide;
constexpr long long kMaxImagePixels = kMaxPngPixels;

// Decodes PNG, JPEG, TIFF (first page), BMP or WebP, chosen by the magic bytes, to CV_8UC1
// luminance: Rec. 601 weights rounded as decode_png does, 16-bit samples scaled by 1/257,
// alpha composited on white, a JPEG's EXIF orientation applied. The size in the header is
// checked before the decoder runs: width * height > max_pixels or a side > kMaxImageSide is
// refused.
cv::Mat decode_image(std::string_view bytes, long long max_pixels = kMaxImagePixels);

// The size the header claims, {width, height} as stored (before a JPEG's EXIF orientation,
// which may swap them), checked like decode_image; the pixel data is not read.
cv::Size image_size(std::string_view bytes, long long max_pixels = kMaxImagePixels);

}  // namespace sv
