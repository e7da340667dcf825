// Every raster a user has, decoded to the luminance sv traces, each format by its own codec
// library from Debian (raster/codecs/): PNG through libpng (decode_png), JPEG through
// libjpeg-turbo, TIFF through libtiff, WebP through libwebp, BMP by sv's own reader. Same error
// contract as png.hpp: anything unreadable, truncated or corrupt is Error(Code::invalid_raster)
// with a one-line message, never a crash, a partial image or a stray line on stderr.
#pragma once
#include <opencv2/core.hpp>
#include <string_view>

#include "raster/png.hpp"

namespace sv {

// The decoded-pixel budget: the most pixels, and the longest side, any header may claim. Checked
// from the header before a decoder allocates anything; each format adds its own limits on what
// its header can make the decoder do (raster/codecs/codec.hpp). 50 megapixels is a phone's
// largest photo (8160x6120) and an A4 page scanned at 600 dpi. Separating the ink and thinning
// cost sv-skeleton 9 to 13 MB a megapixel whatever the drawing: at 100 megapixels a page of a few
// strokes took 892 MB, the grid of 2 px lines every 16 px 1.10 GB before its skeleton was refused
// (and a photo's page, at the 4000x3000 photo's 12.8 MB a megapixel, would need 1.28 GB), too
// close to 1.5 GB; at 50 megapixels 443 and 585 MB (scripts/bench). The skeleton's budget
// (graph/skeletonize.hpp) bounds the stroke graph's work in turn.
constexpr long long kMaxImageSide = kMaxPngSide;
constexpr long long kMaxImagePixels = 50'000'000;

// Decodes PNG, JPEG, TIFF (first page), BMP or WebP, chosen by the magic bytes, to CV_8UC1
// luminance: Rec. 601 weights rounded as decode_png does, 16-bit samples scaled by 1/257,
// alpha composited on white, a JPEG's EXIF orientation and a TIFF's Orientation applied. The
// size in the header is checked before the decoder runs: width * height > max_pixels or a side
// > kMaxImageSide is refused.
cv::Mat decode_image(std::string_view bytes, long long max_pixels = kMaxImagePixels);

// The size the header claims, {width, height} as stored (before an orientation, which may swap
// them), checked like decode_image; the pixel data is not read.
cv::Size image_size(std::string_view bytes, long long max_pixels = kMaxImagePixels);

}  // namespace sv
