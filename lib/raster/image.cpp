// The headers are parsed here rather than by OpenCV so that the size limit holds before any
// decoder allocates; every read is bounds-checked, so truncated or hostile bytes are refused.
#include "raster/image.hpp"

#include <dlfcn.h>
#include <opencv2/imgcodecs.hpp>  // the IMREAD_ flags only: the decoder is in the codec module

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace sv {
namespace {

using namespace std::string_view_literals;

enum class Format { png, jpeg, tiff, bmp, webp };
constexpr const char* kNames[] = {"PNG", "JPEG", "TIFF", "BMP", "WebP"};

[[noreturn]] void refuse(Format f, const std::string& why) {
  throw Error(Code::invalid_raster, std::string("not a readable ") + kNames[static_cast<int>(f)] + ": " + why);
}

std::optional<Format> sniff(std::string_view b) {
  auto at = [&](size_t pos, std::string_view magic) { return b.size() >= pos + magic.size() && b.substr(pos, magic.size()) == magic; };
  if (at(0, "\x89PNG\r\n\x1a\n"sv)) return Format::png;
  if (at(0, "\xFF\xD8\xFF"sv)) return Format::jpeg;
  if (at(0, "II*\0"sv) || at(0, "MM\0*"sv)) return Format::tiff;
  if (at(0, "BM"sv)) return Format::bmp;
  if (at(0, "RIFF"sv) && at(8, "WEBP"sv)) return Format::webp;
  return std::nullopt;
}

// Bounds-checked reads: a header field past the end of the bytes refuses the file.
struct Reader {
  std::string_view b;
  Format f;
  bool le = true;
  uint32_t u8(size_t i) const {
    if (i >= b.size()) refuse(f, "truncated header");
    return static_cast<unsigned char>(b[i]);
  }
  uint32_t u16(size_t i) const { return le ? u8(i) | u8(i + 1) << 8 : u8(i) << 8 | u8(i + 1); }
  uint32_t u24(size_t i) const { return u16(i) | u8(i + 2) << 16; }  // little-endian only (WebP)
  uint32_t u32(size_t i) const { return le ? u16(i) | u16(i + 2) << 16 : u16(i) << 16 | u16(i + 2); }
};

cv::Size checked(Format f, long long w, long long h, long long max_pixels) {
  if (w <= 0 || h <= 0) refuse(f, "header claims an empty image");
  if (w > kMaxImageSide || h > kMaxImageSide || w * h > max_pixels)
    refuse(f, "header claims " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than the limit of " +
                  std::to_string(max_pixels) + " pixels or " + std::to_string(kMaxImageSide) + " per side");
  return {static_cast<int>(w), static_cast<int>(h)};
}

// The first SOFn segment gives the size. With `whole` the walk goes on through the
// entropy-coded data to EOI: libjpeg decodes a truncated file into a partly grey image with
// only a warning, so a missing end is refused here.
cv::Size jpeg_size(const Reader& r, long long max_pixels, bool whole) {
  const size_t n = r.b.size();
  cv::Size size;
  for (size_t i = 2;;) {
    while (i < n && r.u8(i) != 0xFF) ++i;  // entropy-coded data up to the next marker
    while (i < n && r.u8(i) == 0xFF) ++i;  // fill bytes
    if (i >= n) refuse(r.f, size.empty() ? "no frame header" : "truncated (no end-of-image marker)");
    uint32_t m = r.u8(i++);
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // stuffing, TEM, RSTn: no segment
    if (m == 0xD9) {
      if (size.empty()) refuse(r.f, "no frame header");
      return size;
    }
    size_t len = r.u16(i);
    if (len < 2 || len > n - i) refuse(r.f, "truncated segment");
    bool sof = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;  // not DHT, JPG, DAC
    if (sof && size.empty()) {
      if (len < 8) refuse(r.f, "short frame header");
      size = checked(r.f, r.u16(i + 5), r.u16(i + 3), max_pixels);
      if (!whole) return size;
    }
    if (m == 0xDA && size.empty()) refuse(r.f, "scan before the frame header");
    i += len;
  }
}

// A SHORT or LONG field of the first IFD, or `absent`.
uint32_t tiff_tag(const Reader& r, uint32_t tag, uint32_t absent) {
  size_t ifd = r.u32(4), count = r.u16(ifd);
  for (size_t k = 0; k < count; ++k) {
    size_t e = ifd + 2 + 12 * k;
    if (r.u16(e) != tag) continue;
    uint32_t type = r.u16(e + 2);
    return type == 3 ? r.u16(e + 8) : type == 4 ? r.u32(e + 8) : absent;
  }
  return absent;
}

cv::Size header_size(std::string_view bytes, Format f, long long max_pixels, bool whole) {
  Reader r{bytes, f};
  switch (f) {
    case Format::jpeg:
      r.le = false;
      return jpeg_size(r, max_pixels, whole);
    case Format::tiff: {
      r.le = bytes[0] == 'I';
      cv::Size size = checked(f, tiff_tag(r, 256, 0), tiff_tag(r, 257, 0), max_pixels);
      // OpenCV 4.6 reads two samples per pixel as gray and drops the alpha, which would turn
      // a transparent background into ink: refuse rather than guess.
      if (tiff_tag(r, 277, 1) == 2) refuse(f, "gray+alpha TIFF is not supported (save it as PNG)");
      return size;
    }
    case Format::bmp: {
      uint32_t dib = r.u32(14);
      if (dib == 12) return checked(f, r.u16(18), r.u16(20), max_pixels);  // OS/2 BITMAPCOREHEADER
      if (dib < 16) refuse(f, "unknown header");
      // A negative height means rows stored top-down.
      return checked(f, static_cast<int32_t>(r.u32(18)), std::llabs(static_cast<int32_t>(r.u32(22))), max_pixels);
    }
    case Format::webp: {
      r.u8(15);  // the first chunk's name
      std::string_view chunk = bytes.substr(12, 4);
      const size_t d = 20;
      if (chunk == "VP8 ") {
        if (r.u8(d + 3) != 0x9D || r.u8(d + 4) != 0x01 || r.u8(d + 5) != 0x2A) refuse(f, "no VP8 start code");
        return checked(f, r.u16(d + 6) & 0x3FFF, r.u16(d + 8) & 0x3FFF, max_pixels);
      }
      if (chunk == "VP8L") {
        if (r.u8(d) != 0x2F) refuse(f, "no VP8L signature");
        uint32_t bits = r.u32(d + 1);
        return checked(f, 1 + (bits & 0x3FFF), 1 + (bits >> 14 & 0x3FFF), max_pixels);
      }
      if (chunk == "VP8X") return checked(f, 1 + r.u24(d + 4), 1 + r.u24(d + 7), max_pixels);
      refuse(f, "unknown first chunk");
    }
    case Format::png:
      break;
  }
  return png_size(bytes, max_pixels);
}

Format format_of(std::string_view bytes) {
  if (auto f = sniff(bytes)) return *f;
  throw Error(Code::invalid_raster, bytes.empty() ? "not a readable image: empty input (0 bytes)"
                                                  : "not a readable image: expected PNG, JPEG, TIFF, BMP or WebP");
}

// The codec module (lib/raster/codecs), loaded on the first non-PNG input from lib/sv/ beside
// the executable's bin/ (the build tree has the same layout), so that a process reading PNG
// never loads imgcodecs' libraries.
using Imdecode = int (*)(const unsigned char*, int, int, cv::Mat*, char*, size_t);
Imdecode codec_module(Format f) {
  static const std::pair<Imdecode, std::string> loaded = []() -> std::pair<Imdecode, std::string> {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto path = (exe.parent_path().parent_path() / "lib" / "sv" / "sv_imgcodecs.so").string();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return {nullptr, dlerror()};
    auto fn = reinterpret_cast<Imdecode>(dlsym(h, "sv_imdecode"));
    return {fn, fn ? "" : "no sv_imdecode in " + path};
  }();
  if (!loaded.first) throw Error(Code::internal, std::string("cannot decode ") + kNames[static_cast<int>(f)] +
                                                     ": sv's image codec module is missing (" + loaded.second + ")");
  return loaded.first;
}

cv::Mat decode_with_opencv(std::string_view bytes, Format f, cv::Size size) {
  if (bytes.size() > INT_MAX) refuse(f, "more than 2 GiB");
  Imdecode imdecode = codec_module(f);
  cv::Mat m;
  char why[512] = "";
  // imdecode applies a JPEG's EXIF orientation unless asked for IMREAD_UNCHANGED; JPEG has no
  // alpha and Debian's libjpeg is 8-bit, so nothing is lost. The others keep alpha and 16-bit
  // samples.
  int flags = f == Format::jpeg ? cv::IMREAD_ANYCOLOR | cv::IMREAD_ANYDEPTH : cv::IMREAD_UNCHANGED;
  if (imdecode(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()), flags, &m, why,
               sizeof why) != 0)
    m.release();
  if (m.empty()) refuse(f, "truncated or corrupt data" + (*why ? std::string(" (") + why + ")" : ""));
  if (m.size() != size && m.size() != cv::Size(size.height, size.width))
    refuse(f, "decoded size differs from the header's");
  return m;
}

// 8 or 16-bit gray, gray+alpha, BGR or BGRA to CV_8UC1 as decode_png computes it.
cv::Mat to_gray(cv::Mat m, Format f) {
  if (m.depth() == CV_16U) m.convertTo(m, CV_8U, 1.0 / 257);  // rounds, as PNG's scale_16
  const int ch = m.channels();
  if (m.depth() != CV_8U || ch > 4) refuse(f, "unsupported sample type (8 or 16-bit integers, up to 4 channels)");
  cv::Mat gray(m.size(), CV_8UC1);
  for (int y = 0; y < m.rows; ++y) {
    const unsigned char* in = m.ptr<unsigned char>(y);
    unsigned char* out = gray.ptr<unsigned char>(y);
    for (int x = 0; x < m.cols; ++x, in += ch) {
      unsigned l = ch >= 3 ? luma601(in[2], in[1], in[0]) : in[0];
      out[x] = on_white(l, ch == 2 ? in[1] : ch == 4 ? in[3] : 255u);
    }
  }
  return gray;
}

}  // namespace

cv::Size image_size(std::string_view bytes, long long max_pixels) {
  return header_size(bytes, format_of(bytes), max_pixels, false);
}

cv::Mat decode_image(std::string_view bytes, long long max_pixels) {
  Format f = format_of(bytes);
  if (f == Format::png) return decode_png(bytes, max_pixels);
  cv::Size size = header_size(bytes, f, max_pixels, true);
  return to_gray(decode_with_opencv(bytes, f, size), f);
}

}  // namespace sv
