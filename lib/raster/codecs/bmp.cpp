// BMP by sv's own reader: the format is a header, an optional palette and rows of samples (or
// RLE runs of palette indices), which a hundred bounds-checked lines read, where OpenCV's reader
// would bring back imgcodecs and its hundred shared libraries (and the other libraries that read
// BMP, gdk-pixbuf or ImageMagick, dozens of their own). It reads what OpenCV's did, to the same pixels: the OS/2 (12-byte) and
// Windows (40 to 124-byte) headers; 1, 4 and 8-bit palettes, RLE4 and RLE8; 16-bit 5-5-5 and
// 5-6-5 (samples shifted up, as OpenCV did); 24-bit; 32-bit BGRA. Rows are bottom-up unless the
// height is negative. Unlike OpenCV, a 32-bit image whose fourth bytes are all 0 is opaque (most
// writers leave that byte unused) rather than all transparent, and an RLE delta moves down as
// well as across.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "raster/codecs/codec.hpp"
#include "raster/png.hpp"

namespace sv::codec {
namespace {

constexpr const char* kBmp = "BMP";
enum Compression : uint32_t { kRgb = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3 };

struct Header {
  long long width = 0, height = 0;  // height > 0: rows stored bottom-up
  int bpp = 0;
  uint32_t compression = kRgb;
  size_t header_size = 0, data_offset = 0;
};

cv::Size size_of(const Header& h, long long max_pixels) { return checked_size(kBmp, h.width, std::llabs(h.height), max_pixels); }

// The header, its size checked against the budget as soon as it is read.
Header read_header(const Reader& r, long long max_pixels) {
  Header h;
  h.data_offset = r.u32(10);
  h.header_size = r.u32(14);
  if (h.header_size == 12) {  // OS/2 BITMAPCOREHEADER: unsigned 16-bit sides, rows bottom-up
    h.width = r.u16(18);
    h.height = r.u16(20);
    size_of(h, max_pixels);
    h.bpp = static_cast<int>(r.u16(24));
  } else if (h.header_size >= 40 && h.header_size <= 124) {
    h.width = static_cast<int32_t>(r.u32(18));
    h.height = static_cast<int32_t>(r.u32(22));
    size_of(h, max_pixels);
    h.bpp = static_cast<int>(r.u16(28));
  } else {
    refuse(kBmp, "unknown header of " + std::to_string(h.header_size) + " bytes");
  }
  return h;
}

struct Rgb {
  unsigned r = 0, g = 0, b = 0;
};

// Palette entries as gray; entries beyond those stored are black, as in OpenCV.
std::array<unsigned char, 256> gray_palette(const Reader& r, const Header& h) {
  std::array<unsigned char, 256> gray{};
  const uint32_t used = h.header_size == 12 ? 0 : r.u32(46);
  if (used > 256) refuse(kBmp, "a palette of more than 256 colours");
  const size_t count = used ? used : size_t{1} << h.bpp, entry = h.header_size == 12 ? 3 : 4;
  const size_t at = 14 + h.header_size;
  for (size_t i = 0; i < count; ++i) {
    const size_t e = at + i * entry;
    gray[i] = static_cast<unsigned char>(luma601(r.u8(e + 2), r.u8(e + 1), r.u8(e)));
  }
  return gray;
}

// The image's row y (from the top) for stored row k.
int row_of(const Header& h, int k, int rows) { return h.height > 0 ? rows - 1 - k : k; }

cv::Mat read_rle(const Reader& r, const Header& h, cv::Size size, const std::array<unsigned char, 256>& pal) {
  cv::Mat gray(size, CV_8UC1, cv::Scalar(pal[0]));  // what the runs skip is palette entry 0
  const bool four = h.compression == kRle4;
  size_t i = h.data_offset;
  int x = 0, y = 0;  // x == width: the row is full; the next run starts the next one
  auto put = [&](unsigned index) { gray.at<unsigned char>(row_of(h, y, size.height), x++) = pal[index & 0xFF]; };
  auto start_run = [&](uint32_t n) {
    if (x == size.width) x = 0, ++y;
    if (y < size.height && n > static_cast<uint32_t>(size.width - x)) refuse(kBmp, "an RLE run past the end of its row");
    return y < size.height;
  };
  for (;;) {
    const uint32_t n = r.u8(i), code = r.u8(i + 1);
    i += 2;
    if (n > 0) {  // a run of n pixels of one index (RLE4: two alternating ones)
      if (!start_run(n)) break;
      for (uint32_t k = 0; k < n; ++k) put(four ? (k % 2 ? code & 0xF : code >> 4) : code);
    } else if (code == 0) {  // end of row
      x = 0, ++y;
    } else if (code == 1) {  // end of bitmap
      break;
    } else if (code == 2) {  // delta: skip right and down
      if (x == size.width) x = 0, ++y;
      const long long to = static_cast<long long>(y + r.u8(i + 1)) * size.width + x + r.u8(i);
      i += 2;
      y = static_cast<int>(to / size.width), x = static_cast<int>(to % size.width);
    } else {  // absolute: `code` indices follow, padded to 16 bits
      if (!start_run(code)) break;
      const size_t bytes = four ? (code + 1) / 2 : code;
      for (uint32_t k = 0; k < code; ++k) put(four ? (k % 2 ? r.u8(i + k / 2) & 0xF : r.u8(i + k / 2) >> 4) : r.u8(i + k));
      i += (bytes + 1) & ~size_t{1};
    }
    if (y >= size.height) break;
  }
  return gray;
}

cv::Mat read_rows(const Reader& r, const Header& h, cv::Size size, const std::array<unsigned char, 256>& pal) {
  const size_t pitch = ((static_cast<size_t>(size.width) * h.bpp + 31) / 32) * 4;
  if (h.data_offset > r.b.size() || pitch * size.height > r.b.size() - h.data_offset)
    refuse(kBmp, "truncated data: the rows need " + std::to_string(pitch * size.height) + " bytes");
  const auto* data = reinterpret_cast<const unsigned char*>(r.b.data()) + h.data_offset;
  // 16 bits: 5-5-5 unless bit fields say 5-6-5. 32 bits: the fourth byte is alpha unless bit
  // fields leave it out or every one of them is 0.
  bool six = false, alpha = h.bpp == 32;
  if (h.compression == kBitfields) {
    const uint32_t red = r.u32(54), green = r.u32(58), blue = r.u32(62);
    const uint32_t a = h.header_size >= 56 ? r.u32(66) : 0xFF000000u;
    if (h.bpp == 16 && red == 0xF800 && green == 0x7E0 && blue == 0x1F) six = true;
    else if (h.bpp == 16 && !(red == 0x7C00 && green == 0x3E0 && blue == 0x1F))
      refuse(kBmp, "16-bit bit fields other than 5-5-5 and 5-6-5");
    if (h.bpp == 32 && !(red == 0xFF0000 && green == 0xFF00 && blue == 0xFF && (a == 0xFF000000u || a == 0)))
      refuse(kBmp, "32-bit bit fields other than BGRA");
    if (h.bpp == 32 && a == 0) alpha = false;
  }
  if (alpha) {
    alpha = false;
    for (int k = 0; k < size.height && !alpha; ++k)
      for (int x = 0; x < size.width; ++x)
        if (data[k * pitch + 4 * x + 3]) {
          alpha = true;
          break;
        }
  }
  cv::Mat gray(size, CV_8UC1);
  for (int k = 0; k < size.height; ++k) {
    const unsigned char* in = data + k * pitch;
    unsigned char* out = gray.ptr<unsigned char>(row_of(h, k, size.height));
    for (int x = 0; x < size.width; ++x) {
      switch (h.bpp) {
        case 1: out[x] = pal[in[x / 8] >> (7 - x % 8) & 1]; break;
        case 4: out[x] = pal[x % 2 ? in[x / 2] & 0xF : in[x / 2] >> 4]; break;
        case 8: out[x] = pal[in[x]]; break;
        case 16: {
          const unsigned t = in[2 * x] | in[2 * x + 1] << 8;
          const unsigned b = t << 3 & 0xF8, g = six ? t >> 3 & 0xFC : t >> 2 & 0xF8, red = six ? t >> 8 & 0xF8 : t >> 7 & 0xF8;
          out[x] = static_cast<unsigned char>(luma601(red, g, b));
          break;
        }
        case 24: out[x] = static_cast<unsigned char>(luma601(in[3 * x + 2], in[3 * x + 1], in[3 * x])); break;
        default: {
          const unsigned char* p = in + 4 * x;
          const unsigned l = luma601(p[2], p[1], p[0]);
          out[x] = alpha ? on_white(l, p[3]) : static_cast<unsigned char>(l);
        }
      }
    }
  }
  return gray;
}

}  // namespace

cv::Size bmp_size(std::string_view bytes, long long max_pixels) { return size_of(read_header(Reader{bytes, kBmp}, max_pixels), max_pixels); }

cv::Mat decode_bmp(std::string_view bytes, long long max_pixels) {
  const Reader r{bytes, kBmp};
  Header h = read_header(r, max_pixels);
  const cv::Size size = size_of(h, max_pixels);
  if (h.header_size != 12) h.compression = r.u32(30);
  const bool rle = (h.compression == kRle8 && h.bpp == 8) || (h.compression == kRle4 && h.bpp == 4);
  const bool rows = (h.compression == kRgb && (h.bpp == 1 || h.bpp == 4 || h.bpp == 8 || h.bpp == 16 || h.bpp == 24 ||
                                               h.bpp == 32)) ||
                    (h.compression == kBitfields && (h.bpp == 16 || h.bpp == 32));
  if (!rle && !rows)
    refuse(kBmp, "unsupported: " + std::to_string(h.bpp) + " bits per pixel with compression " + std::to_string(h.compression));
  if (h.header_size == 12 && h.bpp == 16) refuse(kBmp, "unsupported: 16 bits per pixel in an OS/2 header");
  std::array<unsigned char, 256> pal{};
  if (h.bpp <= 8) pal = gray_palette(r, h);
  return rle ? read_rle(r, h, size, pal) : read_rows(r, h, size, pal);
}

}  // namespace sv::codec
