// JPEG through libjpeg-turbo's libjpeg API, decoded as OpenCV's reader decoded it (so the pixels
// are the same): libjpeg's default IDCT and upsampling, colour as RGB then Rec. 601 gray, gray as
// stored, CMYK as Adobe writes it (inverted). Every libjpeg warning is an error: libjpeg decodes a
// truncated file or a corrupt scan into a partly grey image with nothing but a warning.
//
// libjpeg reports errors by longjmp. Every function below that calls libjpeg and may be jumped
// out of (the ones with setjmp) holds only trivially destructible locals, so no C++ object is
// ever skipped; buffers are owned by the callers.
#include <cstddef>
#include <cstdio>  // jpeglib.h needs FILE

#include <jpeglib.h>

#include <csetjmp>
#include <cstring>
#include <vector>

#include "raster/codecs/codec.hpp"
#include "raster/png.hpp"

namespace sv::codec {
namespace {

constexpr const char* kJpeg = "JPEG";

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<ErrorMgr*>(c->err);
  c->err->format_message(c, e->message);
  std::longjmp(e->jump, 1);
}

// Level -1 is a warning (corrupt or missing data); levels 0 and up are trace messages.
void on_message(j_common_ptr c, int level) {
  if (level < 0) on_error(c);
}

// Called as the input is consumed, at least once per row of blocks of each scan.
void on_progress(j_common_ptr c) {
  auto* d = reinterpret_cast<j_decompress_ptr>(c);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* e = reinterpret_cast<ErrorMgr*>(c->err);
    std::snprintf(e->message, sizeof e->message, "more than %d scans, the limit", kMaxJpegScans);
    std::longjmp(e->jump, 1);
  }
}

// The libjpeg state of one decoding, released whatever happens.
struct Jpeg {
  jpeg_decompress_struct cinfo;
  ErrorMgr err;
  jpeg_progress_mgr progress;
  Jpeg() {
    std::memset(&cinfo, 0, sizeof cinfo);
    std::memset(&progress, 0, sizeof progress);
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    err.message[0] = '\0';
    progress.progress_monitor = on_progress;
  }
  ~Jpeg() { jpeg_destroy_decompress(&cinfo); }
  Jpeg(const Jpeg&) = delete;
  Jpeg& operator=(const Jpeg&) = delete;
};

// The markers up to the first scan, APP1 (EXIF) kept.
bool read_header(Jpeg& j, const unsigned char* data, size_t size) {
  if (setjmp(j.err.jump)) return false;
  jpeg_create_decompress(&j.cinfo);
  j.cinfo.progress = &j.progress;
  jpeg_mem_src(&j.cinfo, data, size);
  jpeg_save_markers(&j.cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&j.cinfo, TRUE);
  return true;
}

// CMYK as OpenCV converted it: Adobe's inverted samples, c' = k - (255 - c) k / 256.
void cmyk_row_to_gray(const unsigned char* in, int width, unsigned char* out) {
  for (int x = 0; x < width; ++x, in += 4) {
    const int k = in[3];
    const int r = k - ((255 - in[0]) * k >> 8), g = k - ((255 - in[1]) * k >> 8), b = k - ((255 - in[2]) * k >> 8);
    out[x] = static_cast<unsigned char>(luma601(r, g, b));
  }
}

bool read_pixels(Jpeg& j, unsigned char* out, size_t step, unsigned char* row) {
  if (setjmp(j.err.jump)) return false;
  jpeg_decompress_struct& c = j.cinfo;
  c.out_color_space = c.num_components == 1 ? JCS_GRAYSCALE : c.num_components == 4 ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&c);
  const int width = static_cast<int>(c.output_width);
  while (c.output_scanline < c.output_height) {
    unsigned char* dst = out + c.output_scanline * step;
    JSAMPROW r = c.out_color_components == 1 ? dst : row;
    jpeg_read_scanlines(&c, &r, 1);
    if (c.out_color_components == 3)
      for (int x = 0; x < width; ++x) dst[x] = static_cast<unsigned char>(luma601(row[3 * x], row[3 * x + 1], row[3 * x + 2]));
    else if (c.out_color_components == 4)
      cmyk_row_to_gray(row, width, dst);
  }
  jpeg_finish_decompress(&c);  // reads on to the end-of-image marker: what is left must be whole
  return true;
}

// The Orientation (tag 0x0112) of IFD0 in the first APP1 segment that holds EXIF, or 1. Every
// offset is checked against the segment; nothing else of the EXIF data is read.
int exif_orientation(const jpeg_saved_marker_ptr markers) {
  for (jpeg_saved_marker_ptr m = markers; m; m = m->next) {
    const unsigned char* d = m->data;
    const size_t n = m->data_length;
    if (m->marker != JPEG_APP0 + 1 || n < 14 || std::memcmp(d, "Exif\0\0", 6) != 0) continue;
    const unsigned char* t = d + 6;  // the TIFF structure; offsets count from here
    const size_t tn = n - 6;
    const bool le = t[0] == 'I' && t[1] == 'I';
    if (!le && !(t[0] == 'M' && t[1] == 'M')) return 1;
    auto u16 = [&](size_t i) -> unsigned { return le ? t[i] | t[i + 1] << 8 : t[i] << 8 | t[i + 1]; };
    auto u32 = [&](size_t i) -> size_t { return le ? u16(i) | size_t{u16(i + 2)} << 16 : size_t{u16(i)} << 16 | u16(i + 2); };
    const size_t ifd = u32(4);
    if (ifd > tn - 2) return 1;
    const size_t count = u16(ifd);
    for (size_t k = 0; k < count && ifd + 2 + 12 * (k + 1) <= tn; ++k) {
      const size_t e = ifd + 2 + 12 * k;
      if (u16(e) == 0x0112 && u16(e + 2) == 3 && u32(e + 4) >= 1) return static_cast<int>(u16(e + 8));
    }
    return 1;
  }
  return 1;
}

}  // namespace

// The libjpeg-turbo this file was compiled against (its library has no version query): named by
// --version (cli/version.cpp) in executables that read images.
#define SV_STRINGIFY2(x) #x
#define SV_STRINGIFY(x) SV_STRINGIFY2(x)
std::string jpeg_library_version() {
#ifdef LIBJPEG_TURBO_VERSION
  return SV_STRINGIFY(LIBJPEG_TURBO_VERSION);
#else
  return "libjpeg " SV_STRINGIFY(JPEG_LIB_VERSION);
#endif
}
#undef SV_STRINGIFY
#undef SV_STRINGIFY2

// The first frame header (SOFn) gives the size: the markers before it are walked, each
// segment's length checked against the bytes.
cv::Size jpeg_size(std::string_view bytes, long long max_pixels) {
  const Reader r{bytes, kJpeg, false};
  const size_t n = bytes.size();
  for (size_t i = 2;;) {
    while (i < n && r.u8(i) != 0xFF) ++i;  // libjpeg refuses such stray bytes (a warning)
    while (i < n && r.u8(i) == 0xFF) ++i;  // fill bytes
    if (i >= n) refuse(kJpeg, "no frame header");
    const uint32_t m = r.u8(i++);
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // stuffing, TEM, RSTn: no segment
    if (m == 0xD9 || m == 0xDA) refuse(kJpeg, "no frame header before the image data");
    const size_t len = r.u16(i);
    if (len < 2 || len > n - i) refuse(kJpeg, "truncated segment");
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {  // SOFn, not DHT, JPG, DAC
      if (len < 8) refuse(kJpeg, "short frame header");
      return checked_size(kJpeg, r.u16(i + 5), r.u16(i + 3), max_pixels);
    }
    i += len;
  }
}

cv::Mat decode_jpeg(std::string_view bytes, long long max_pixels) {
  const cv::Size size = jpeg_size(bytes, max_pixels);
  Jpeg j;
  if (!read_header(j, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size())) refuse(kJpeg, j.err.message);
  if (cv::Size(j.cinfo.image_width, j.cinfo.image_height) != size) refuse(kJpeg, "two frame headers of different sizes");
  const int orientation = exif_orientation(j.cinfo.marker_list);
  cv::Mat gray(size, CV_8UC1);
  std::vector<unsigned char> row(static_cast<size_t>(size.width) * 4);
  if (!read_pixels(j, gray.data, gray.step, row.data())) refuse(kJpeg, j.err.message);
  return oriented(gray, orientation);
}

}  // namespace sv::codec
