// libpng reports errors by longjmp. Every function that calls libpng and may be jumped out of
// (the ones with setjmp below) holds only trivially destructible locals, so no C++ object is
// ever skipped; buffers are owned by the callers.
#include "raster/png.hpp"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace sv {
namespace {

struct PngIo {
  const unsigned char* data = nullptr;
  size_t size = 0, pos = 0;
  std::string* out = nullptr;  // encoding target
  char message[160] = "";
};

void on_error(png_structp png, png_const_charp msg) {
  auto* io = static_cast<PngIo*>(png_get_error_ptr(png));
  std::snprintf(io->message, sizeof io->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep dst, png_size_t n) {
  auto* io = static_cast<PngIo*>(png_get_io_ptr(png));
  if (n > io->size - io->pos) png_error(png, "truncated data");
  std::memcpy(dst, io->data + io->pos, n);
  io->pos += n;
}

void on_write(png_structp png, png_bytep src, png_size_t n) {
  static_cast<PngIo*>(png_get_io_ptr(png))->out->append(reinterpret_cast<const char*>(src), n);
}

void on_flush(png_structp) {}

[[noreturn]] void refuse(const std::string& why) {
  throw Error(Code::invalid_raster, "not a readable PNG: " + why);
}

// Owns the libpng read structures.
struct ReadStruct {
  png_structp png = nullptr;
  png_infop info = nullptr;
  PngIo io;
  explicit ReadStruct(std::string_view bytes) {
    io.data = reinterpret_cast<const unsigned char*>(bytes.data());
    io.size = bytes.size();
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (png) info = png_create_info_struct(png);
    if (!png || !info) throw Error(Code::internal, "libpng could not be initialised");
    png_set_read_fn(png, &io, on_read);
    png_set_user_limits(png, kMaxPngSide, kMaxPngSide);
    png_set_chunk_malloc_max(png, 8u << 20);  // bounds ancillary chunks (zTXt bombs)
    // Every chunk's CRC-32 is still checked; zlib's Adler-32 over the same bytes adds nothing.
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
  }
  ~ReadStruct() { png_destroy_read_struct(&png, &info, nullptr); }
  ReadStruct(const ReadStruct&) = delete;
  ReadStruct& operator=(const ReadStruct&) = delete;
};

// Reads and validates every chunk before the image data.
bool read_info(png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  return true;
}

// Transforms every colour type to 8-bit gray, gray+alpha, RGB or RGBA (tRNS becomes alpha).
bool configure(png_structp png, png_infop info, int* channels, size_t* rowbytes, int* passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_expand(png);
  if (png_get_bit_depth(png, info) == 16) png_set_scale_16(png);
  *passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *channels = png_get_channels(png, info);
  *rowbytes = png_get_rowbytes(png, info);
  return true;
}

// Rec. 601 luminance composited on white: out = Y * a + 255 * (1 - a). One loop per layout,
// each a plain pass; opaque layouts skip the compositing, as on_white(y, 255) == y.
void row_to_gray(const unsigned char* in, int channels, int width, unsigned char* out) {
  switch (channels) {
    case 1: std::memcpy(out, in, width); break;
    case 2:
      for (int x = 0; x < width; ++x, in += 2) out[x] = on_white(in[0], in[1]);
      break;
    case 3:
      for (int x = 0; x < width; ++x, in += 3) out[x] = static_cast<unsigned char>(luma601(in[0], in[1], in[2]));
      break;
    default:
      for (int x = 0; x < width; ++x, in += 4) out[x] = on_white(luma601(in[0], in[1], in[2]), in[3]);
  }
}

bool read_progressive(png_structp png, int channels, int width, int height, unsigned char* row,
                      unsigned char* out, size_t out_step) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int y = 0; y < height; ++y) {
    if (channels == 1) {  // already gray: straight into the image
      png_read_row(png, out + y * out_step, nullptr);
      continue;
    }
    png_read_row(png, row, nullptr);
    row_to_gray(row, channels, width, out + y * out_step);
  }
  png_read_end(png, nullptr);
  return true;
}

bool read_interlaced(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  return true;
}

// The big-endian 32-bit number at bytes[i] (PNG's byte order).
uint32_t big_endian32(std::string_view bytes, size_t i) {
  auto u8 = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + k])); };
  return u8(0) << 24 | u8(1) << 16 | u8(2) << 8 | u8(3);
}

void check_signature(std::string_view bytes) {
  if (bytes.empty()) refuse("empty input (0 bytes)");
  if (bytes.size() < 8 || png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8) != 0)
    refuse("no PNG signature");
}

// The size claimed by the IHDR chunk, which the PNG format puts first, checked against the
// limits before libpng reads anything else.
cv::Size claimed_size(std::string_view bytes, long long max_pixels) {
  if (bytes.size() < 24 || bytes.substr(12, 4) != "IHDR") refuse("no IHDR chunk after the signature");
  uint32_t w = big_endian32(bytes, 16), h = big_endian32(bytes, 20);
  if (w == 0 || h == 0) refuse("header claims an empty image");
  if (w > kMaxPngSide || h > kMaxPngSide || static_cast<long long>(w) * h > max_pixels)
    refuse("header claims " + std::to_string(w) + "x" + std::to_string(h) + " pixels, more than the limit of " +
           std::to_string(max_pixels) + " pixels or " + std::to_string(kMaxPngSide) + " per side");
  return {static_cast<int>(w), static_cast<int>(h)};
}

// Every chunk up to IEND lies within the bytes. libpng allocates a text chunk's claimed length
// before reading it (a 414-byte file claiming a 1.9 GB tEXt took 1.9 GB), and a chunk running
// past the end is refused as truncated anyway once read.
void check_chunks(std::string_view bytes) {
  for (size_t pos = 8; pos + 8 <= bytes.size();) {
    const uint64_t length = big_endian32(bytes, pos);
    const std::string_view type = bytes.substr(pos + 4, 4);
    if (length + 12 > bytes.size() - pos)
      refuse("truncated data: chunk " + std::string(type) + " claims " + std::to_string(length) + " bytes, " +
             std::to_string(bytes.size() - pos - 8) + " are left");
    if (type == "IEND") return;
    pos += 12 + length;
  }
}

bool write_image(png_structp png, png_infop info, const cv::Mat& m, int color_type) {
  if (setjmp(png_jmpbuf(png))) return false;
  // Views are flat colour, lines and text over a faded copy of the drawing. libpng's default tries
  // all five filters on every row at zlib level 6: 15 ms for an 816x834 tool view (most of a tool
  // call), 110 ms for the 1096x1126 view of a photographed drawing. The "up" filter alone at level
  // 4 takes 6 and 31 ms for 1% and 16% more bytes (14% more over the 144 dev drawings' views).
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
  png_set_compression_level(png, 4);
  png_set_IHDR(png, info, m.cols, m.rows, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (color_type == PNG_COLOR_TYPE_RGB) png_set_bgr(png);
  for (int y = 0; y < m.rows; ++y) png_write_row(png, m.ptr<unsigned char>(y));
  png_write_end(png, nullptr);
  return true;
}

std::string encode(const cv::Mat& m, int color_type) {
  std::string out;
  PngIo io;
  io.out = &out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw Error(Code::internal, "libpng could not be initialised");
  }
  png_set_write_fn(png, &io, on_write, on_flush);
  bool ok = write_image(png, info, m, color_type);
  png_destroy_write_struct(&png, &info);
  if (!ok) throw Error(Code::internal, std::string("PNG encoding failed: ") + io.message);
  return out;
}

}  // namespace

cv::Size png_size(std::string_view bytes, long long max_pixels) {
  check_signature(bytes);
  return claimed_size(bytes, max_pixels);
}

cv::Mat decode_png(std::string_view bytes, long long max_pixels) {
  check_signature(bytes);
  cv::Size size = claimed_size(bytes, max_pixels);
  check_chunks(bytes);
  ReadStruct r(bytes);
  if (!read_info(r.png, r.info)) refuse(r.io.message);
  int channels = 0, passes = 0;
  size_t rowbytes = 0;
  if (!configure(r.png, r.info, &channels, &rowbytes, &passes)) refuse(r.io.message);
  cv::Mat gray(size, CV_8UC1);
  if (passes == 1) {
    std::vector<unsigned char> row(rowbytes);
    if (!read_progressive(r.png, channels, size.width, size.height, row.data(), gray.data, gray.step))
      refuse(r.io.message);
    return gray;
  }
  std::vector<unsigned char> pixels(rowbytes * size.height);
  std::vector<png_bytep> rows(size.height);
  for (int y = 0; y < size.height; ++y) rows[y] = pixels.data() + y * rowbytes;
  if (!read_interlaced(r.png, rows.data())) refuse(r.io.message);
  for (int y = 0; y < size.height; ++y) row_to_gray(rows[y], channels, size.width, gray.ptr<unsigned char>(y));
  return gray;
}

std::string encode_png_gray(const cv::Mat& gray) {
  if (gray.empty() || gray.type() != CV_8UC1) throw Error(Code::internal, "encode_png_gray needs a non-empty CV_8UC1 image");
  return encode(gray, PNG_COLOR_TYPE_GRAY);
}

std::string encode_png_rgb(const cv::Mat& bgr) {
  if (bgr.empty() || bgr.type() != CV_8UC3) throw Error(Code::internal, "encode_png_rgb needs a non-empty CV_8UC3 image");
  return encode(bgr, PNG_COLOR_TYPE_RGB);
}

}  // namespace sv
