// What the decoders behind decode_image (raster/image.hpp) share: the refusal every one of them
// throws, the size check every header goes through, the limits each format adds to the pixel
// budget, and the conversions to the gray sv traces. One file per format beside this one.
#pragma once
#include <opencv2/core.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sv::codec {

// Limits beyond the pixel budget (kMaxImagePixels, kMaxImageSide in raster/image.hpp), each
// checked before the work it bounds:
//
// Scans of a JPEG. Every scan of a progressive JPEG is a pass over every block of the image;
// libjpeg's own progressions have 6 (gray) to 10 (colour) scans, libjpeg-turbo's TurboJPEG
// API stops at 500. 64 passes over a 100-megapixel image's blocks take about a second.
constexpr int kMaxJpegScans = 64;
// Bytes of one TIFF tile, or strip of a planar image, as libtiff decodes it whole (a strip of
// interleaved samples is read a row at a time); 64 MiB is a 4096x4096 RGBA tile.
constexpr long long kMaxTiffChunkBytes = 64LL << 20;
// A TIFF tile may be larger than the image (a writer's fixed 256x256 tiles on a small image), but
// not by more than this factor per side over the image's side or kMinTiffTileSide, whichever is
// larger: the tiles then cover at most about 4x the image's pixels.
constexpr long long kTiffTileOverhang = 2, kMinTiffTileSide = 512;
// Largest single allocation libtiff may make (its directory's arrays, a strip's buffer).
constexpr long long kMaxTiffAlloc = 256LL << 20;

// The versions of libjpeg-turbo (compiled against) and libtiff (asked of it) for --version.
std::string jpeg_library_version();
std::string tiff_library_version();

[[noreturn]] void refuse(const char* format, const std::string& why);

// Bounds-checked reads of a header: a field past the end of the bytes refuses the file. Each
// format reads its size this way, before its library sees the bytes, so the budget holds
// whatever the library would do with the rest; the library's own reading must then agree.
struct Reader {
  std::string_view b;
  const char* format;
  bool le = true;
  uint32_t u8(size_t i) const {
    if (i >= b.size()) refuse(format, "truncated");
    return static_cast<unsigned char>(b[i]);
  }
  uint32_t u16(size_t i) const { return le ? u8(i) | u8(i + 1) << 8 : u8(i) << 8 | u8(i + 1); }
  uint32_t u24(size_t i) const { return u16(i) | u8(i + 2) << 16; }  // little-endian only (WebP)
  uint32_t u32(size_t i) const { return le ? u16(i) | u16(i + 2) << 16 : u16(i) << 16 | u16(i + 2); }
};

// {w, h}, refused (naming the claim) when either side is not positive, exceeds kMaxImageSide, or
// w * h exceeds max_pixels.
cv::Size checked_size(const char* format, long long w, long long h, long long max_pixels);

// Each format's header size (read with Reader, checked as above; the pixel data is not read) and
// its decoder to CV_8UC1 (raster/image.hpp says how colours, alpha and 16-bit samples become gray).
cv::Size jpeg_size(std::string_view bytes, long long max_pixels);
cv::Mat decode_jpeg(std::string_view bytes, long long max_pixels);
cv::Size tiff_size(std::string_view bytes, long long max_pixels);
cv::Mat decode_tiff(std::string_view bytes, long long max_pixels);
cv::Size webp_size(std::string_view bytes, long long max_pixels);
cv::Mat decode_webp(std::string_view bytes, long long max_pixels);
cv::Size bmp_size(std::string_view bytes, long long max_pixels);
cv::Mat decode_bmp(std::string_view bytes, long long max_pixels);

// The image as displayed under an EXIF or TIFF Orientation value (1-8; anything else leaves it
// as stored): 2 mirrors, 3 turns by 180 degrees, 6 by 90 clockwise, 8 by 90 counter-clockwise,
// 5 and 7 transpose.
cv::Mat oriented(cv::Mat gray, int orientation);

// A 16-bit sample as 8 bits, rounded (v / 257): libpng's scale_16 and OpenCV's convertTo agree.
inline unsigned to8(unsigned v16) { return (v16 + 128) / 257; }

// Rec. 601 luminance and compositing on white: raster/png.hpp's luma601 and on_white.

}  // namespace sv::codec
