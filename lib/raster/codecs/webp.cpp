// WebP through libwebp, decoded as OpenCV's reader decoded it (libwebp's default decoding, fancy
// upsampling of lossy chroma): RGB, or RGBA when the file has alpha. libwebp decodes into one
// buffer of the whole image (3 or 4 bytes a pixel); the pixel budget bounds it.
#include <webp/decode.h>

#include <vector>

#include "raster/codecs/codec.hpp"
#include "raster/png.hpp"

namespace sv::codec {
namespace {

constexpr const char* kWebP = "WebP";

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt data";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated data";
    default: return "cannot decode";
  }
}

}  // namespace

// The first chunk's header gives the size: VP8 (lossy), VP8L (lossless) or VP8X (extended).
cv::Size webp_size(std::string_view bytes, long long max_pixels) {
  const Reader r{bytes, kWebP};
  r.u8(15);  // the first chunk's name
  const std::string_view chunk = bytes.substr(12, 4);
  const size_t d = 20;
  if (chunk == "VP8 ") {
    if (r.u8(d + 3) != 0x9D || r.u8(d + 4) != 0x01 || r.u8(d + 5) != 0x2A) refuse(kWebP, "no VP8 start code");
    return checked_size(kWebP, r.u16(d + 6) & 0x3FFF, r.u16(d + 8) & 0x3FFF, max_pixels);
  }
  if (chunk == "VP8L") {
    if (r.u8(d) != 0x2F) refuse(kWebP, "no VP8L signature");
    const uint32_t bits = r.u32(d + 1);
    return checked_size(kWebP, 1 + (bits & 0x3FFF), 1 + (bits >> 14 & 0x3FFF), max_pixels);
  }
  if (chunk == "VP8X") return checked_size(kWebP, 1 + r.u24(d + 4), 1 + r.u24(d + 7), max_pixels);
  refuse(kWebP, "unknown first chunk");
}

cv::Mat decode_webp(std::string_view bytes, long long max_pixels) {
  const cv::Size size = webp_size(bytes, max_pixels);
  WebPBitstreamFeatures f;
  const VP8StatusCode got = WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f);
  if (got != VP8_STATUS_OK) refuse(kWebP, status_text(got));
  if (f.has_animation) refuse(kWebP, "an animation (save one frame as PNG)");
  if (cv::Size(f.width, f.height) != size) refuse(kWebP, "the image's size differs from its first chunk's");
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) refuse(kWebP, "libwebp could not be initialised");
  const int channels = f.has_alpha ? 4 : 3;
  const size_t stride = static_cast<size_t>(size.width) * channels;
  std::vector<uint8_t> rgb(stride * size.height);
  config.output.colorspace = f.has_alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgb.data();
  config.output.u.RGBA.stride = static_cast<int>(stride);
  config.output.u.RGBA.size = rgb.size();
  const VP8StatusCode s = WebPDecode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);  // external memory: frees nothing of ours
  if (s != VP8_STATUS_OK) refuse(kWebP, status_text(s));
  cv::Mat gray(size, CV_8UC1);
  for (int y = 0; y < size.height; ++y) {
    const uint8_t* in = rgb.data() + y * stride;
    unsigned char* out = gray.ptr<unsigned char>(y);
    for (int x = 0; x < size.width; ++x, in += channels) {
      const unsigned l = luma601(in[0], in[1], in[2]);
      out[x] = channels == 4 ? on_white(l, in[3]) : static_cast<unsigned char>(l);
    }
  }
  return gray;
}

}  // namespace sv::codec
