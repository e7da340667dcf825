// The format is chosen by the magic bytes; each decoder (raster/codecs/) checks its header's
// claims before it decodes.
#include "raster/image.hpp"

#include <opencv2/core.hpp>

#include <optional>
#include <string>

#include "core/error.hpp"
#include "raster/codecs/codec.hpp"

namespace sv {

namespace codec {

void refuse(const char* format, const std::string& why) {
  throw Error(Code::invalid_raster, std::string("not a readable ") + format + ": " + why);
}

cv::Size checked_size(const char* format, long long w, long long h, long long max_pixels) {
  if (w <= 0 || h <= 0) refuse(format, "header claims an empty image");
  if (w > kMaxImageSide || h > kMaxImageSide || w * h > max_pixels)
    refuse(format, "header claims " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than the limit of " +
                       std::to_string(max_pixels) + " pixels or " + std::to_string(kMaxImageSide) + " per side");
  return {static_cast<int>(w), static_cast<int>(h)};
}

cv::Mat oriented(cv::Mat gray, int orientation) {
  cv::Mat out;
  switch (orientation) {
    case 2: cv::flip(gray, out, 1); return out;
    case 3: cv::flip(gray, out, -1); return out;
    case 4: cv::flip(gray, out, 0); return out;
    case 5: cv::transpose(gray, out); return out;
    case 6: cv::transpose(gray, out); cv::flip(out, out, 1); return out;
    case 7: cv::transpose(gray, out); cv::flip(out, out, -1); return out;
    case 8: cv::transpose(gray, out); cv::flip(out, out, 0); return out;
    default: return gray;
  }
}

}  // namespace codec

namespace {

using namespace std::string_view_literals;

enum class Format { png, jpeg, tiff, bmp, webp };

std::optional<Format> sniff(std::string_view b) {
  auto at = [&](size_t pos, std::string_view magic) { return b.size() >= pos + magic.size() && b.substr(pos, magic.size()) == magic; };
  if (at(0, "\x89PNG\r\n\x1a\n"sv)) return Format::png;
  if (at(0, "\xFF\xD8\xFF"sv)) return Format::jpeg;
  if (at(0, "II*\0"sv) || at(0, "MM\0*"sv)) return Format::tiff;
  if (at(0, "BM"sv)) return Format::bmp;
  if (at(0, "RIFF"sv) && at(8, "WEBP"sv)) return Format::webp;
  return std::nullopt;
}

Format format_of(std::string_view bytes) {
  if (auto f = sniff(bytes)) return *f;
  throw Error(Code::invalid_raster, bytes.empty() ? "not a readable image: empty input (0 bytes)"
                                                  : "not a readable image: expected PNG, JPEG, TIFF, BMP or WebP");
}

}  // namespace

cv::Size image_size(std::string_view bytes, long long max_pixels) {
  switch (format_of(bytes)) {
    case Format::jpeg: return codec::jpeg_size(bytes, max_pixels);
    case Format::tiff: return codec::tiff_size(bytes, max_pixels);
    case Format::bmp: return codec::bmp_size(bytes, max_pixels);
    case Format::webp: return codec::webp_size(bytes, max_pixels);
    case Format::png: break;
  }
  return png_size(bytes, max_pixels);
}

cv::Mat decode_image(std::string_view bytes, long long max_pixels) {
  switch (format_of(bytes)) {
    case Format::jpeg: return codec::decode_jpeg(bytes, max_pixels);
    case Format::tiff: return codec::decode_tiff(bytes, max_pixels);
    case Format::bmp: return codec::decode_bmp(bytes, max_pixels);
    case Format::webp: return codec::decode_webp(bytes, max_pixels);
    case Format::png: break;
  }
  return decode_png(bytes, max_pixels);
}

}  // namespace sv
