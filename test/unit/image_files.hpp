// Image files for the decoder tests, written with the codec libraries' own encoders (libjpeg,
// libtiff, libwebp) or by hand (BMP), so that no test process needs OpenCV's imgcodecs. Images
// are CV_8UC1 gray, CV_8UC3 BGR or CV_8UC4 BGRA, 8 or 16-bit (TIFF), as OpenCV orders them.
#pragma once
#include <cstdio>  // jpeglib.h needs FILE

#include <jpeglib.h>
#include <tiffio.h>
#include <webp/encode.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

namespace sv::test {

// Interleaved samples of row y in the file's order (RGB, RGBA), from OpenCV's (BGR, BGRA).
inline std::vector<unsigned char> file_row(const cv::Mat& m, int y) {
  const size_t bytes = m.cols * m.elemSize();
  std::vector<unsigned char> row(m.ptr<unsigned char>(y), m.ptr<unsigned char>(y) + bytes);
  if (m.channels() >= 3) {
    const size_t es = m.elemSize1(), step = m.elemSize();
    for (int x = 0; x < m.cols; ++x)
      for (size_t b = 0; b < es; ++b) std::swap(row[x * step + b], row[x * step + 2 * es + b]);
  }
  return row;
}

struct JpegOptions {
  int quality = 95;
  bool progressive = false;
  bool cmyk = false;  // a gray or BGR image written as Adobe's inverted CMYK
  bool many_scans = false;  // gray only: a valid progression of 127 scans (each AC coefficient alone, twice)
};

inline std::string encode_jpeg(const cv::Mat& m, JpegOptions o = {}) {
  REQUIRE(m.depth() == CV_8U);
  REQUIRE((m.channels() == 1 || m.channels() == 3));
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = m.cols;
  c.image_height = m.rows;
  c.input_components = o.cmyk ? 4 : m.channels();
  c.in_color_space = o.cmyk ? JCS_CMYK : m.channels() == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, o.quality, TRUE);
  if (o.progressive) jpeg_simple_progression(&c);
  std::vector<jpeg_scan_info> scans;
  if (o.many_scans) {
    REQUIRE(m.channels() == 1);
    scans.push_back({1, {0}, 0, 0, 0, 0});
    for (int k = 1; k < 64; ++k) scans.push_back({1, {0}, k, k, 0, 1});
    for (int k = 1; k < 64; ++k) scans.push_back({1, {0}, k, k, 1, 0});
    c.scan_info = scans.data();
    c.num_scans = static_cast<int>(scans.size());
  }
  jpeg_start_compress(&c, TRUE);
  std::vector<unsigned char> cmyk(m.cols * 4);
  for (int y = 0; y < m.rows; ++y) {
    std::vector<unsigned char> row = file_row(m, y);
    JSAMPROW r = row.data();
    if (o.cmyk) {  // k = 255 (inverted: no black), c m y inverted = the colour itself
      for (int x = 0; x < m.cols; ++x) {
        for (int k = 0; k < 3; ++k) cmyk[4 * x + k] = row[(m.channels() == 1 ? 1 : 3) * x + (m.channels() == 1 ? 0 : k)];
        cmyk[4 * x + 3] = 255;
      }
      r = cmyk.data();
    }
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string bytes(reinterpret_cast<char*>(out), size);
  std::free(out);
  return bytes;
}

struct TiffOptions {
  uint16_t compression = COMPRESSION_NONE;
  uint32_t tile = 0;  // tile side; 0: strips
  uint32_t rows_per_strip = 0;  // 0: libtiff's default
  bool planar = false;
  uint16_t alpha = EXTRASAMPLE_UNASSALPHA;  // for 2 or 4 channels
  uint16_t photometric = 0xFFFF;  // 0xFFFF: MINISBLACK or RGB by the channels
};

namespace tiff_io {
struct Buffer {
  std::string bytes;
  toff_t pos = 0;
};
inline tmsize_t read(thandle_t h, void* b, tmsize_t n) {
  auto* s = static_cast<Buffer*>(h);
  const toff_t k = std::min<toff_t>(n, s->bytes.size() > s->pos ? s->bytes.size() - s->pos : 0);
  std::memcpy(b, s->bytes.data() + s->pos, k);
  s->pos += k;
  return k;
}
inline tmsize_t write(thandle_t h, void* b, tmsize_t n) {
  auto* s = static_cast<Buffer*>(h);
  if (s->pos + n > s->bytes.size()) s->bytes.resize(s->pos + n);
  std::memcpy(s->bytes.data() + s->pos, b, n);
  s->pos += n;
  return n;
}
inline toff_t seek(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<Buffer*>(h);
  s->pos = (whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->bytes.size() : 0) + off;
  return s->pos;
}
inline int close(thandle_t) { return 0; }
inline toff_t size(thandle_t h) { return static_cast<Buffer*>(h)->bytes.size(); }
inline int map(thandle_t, void**, toff_t*) { return 0; }
inline void unmap(thandle_t, void*, toff_t) {}
}  // namespace tiff_io

inline std::string encode_tiff(const cv::Mat& m, TiffOptions o = {}) {
  REQUIRE((m.depth() == CV_8U || m.depth() == CV_16U));
  tiff_io::Buffer buf;
  TIFF* t = TIFFClientOpen("test", "w", &buf, tiff_io::read, tiff_io::write, tiff_io::seek, tiff_io::close, tiff_io::size,
                           tiff_io::map, tiff_io::unmap);
  REQUIRE(t);
  const int ch = m.channels(), bps = m.depth() == CV_8U ? 8 : 16;
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, m.cols);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, m.rows);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bps);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, ch);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, o.photometric != 0xFFFF ? o.photometric : ch >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_COMPRESSION, o.compression);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, o.planar ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
  if (ch == 2 || ch == 4) {
    uint16_t kinds[1] = {o.alpha};
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, kinds);
  }
  const int planes = o.planar ? ch : 1, spp = o.planar ? 1 : ch;
  const size_t es = bps / 8;
  // Samples of plane p (all of them when interleaved) of row y.
  auto samples = [&](int y, int p) {
    std::vector<unsigned char> row = file_row(m, y), out;
    if (!o.planar) return row;
    for (int x = 0; x < m.cols; ++x) out.insert(out.end(), &row[(x * ch + p) * es], &row[(x * ch + p) * es] + es);
    return out;
  };
  if (o.tile) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, o.tile);
    TIFFSetField(t, TIFFTAG_TILELENGTH, o.tile);
    std::vector<unsigned char> tile(TIFFTileSize(t));
    for (int p = 0; p < planes; ++p)
      for (uint32_t y0 = 0; y0 < static_cast<uint32_t>(m.rows); y0 += o.tile)
        for (uint32_t x0 = 0; x0 < static_cast<uint32_t>(m.cols); x0 += o.tile) {
          std::fill(tile.begin(), tile.end(), 0);
          for (uint32_t k = 0; k < o.tile && y0 + k < static_cast<uint32_t>(m.rows); ++k) {
            std::vector<unsigned char> row = samples(y0 + k, p);
            const size_t n = std::min<size_t>(o.tile, m.cols - x0) * spp * es;
            std::memcpy(&tile[k * o.tile * spp * es], &row[x0 * spp * es], n);
          }
          REQUIRE(TIFFWriteTile(t, tile.data(), x0, y0, 0, p) >= 0);
        }
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, o.rows_per_strip ? o.rows_per_strip : TIFFDefaultStripSize(t, 0));
    for (int p = 0; p < planes; ++p)
      for (int y = 0; y < m.rows; ++y) {
        std::vector<unsigned char> row = samples(y, p);
        REQUIRE(TIFFWriteScanline(t, row.data(), y, p) >= 0);
      }
  }
  TIFFClose(t);
  return buf.bytes;
}

// Lossless (quality > 100) or lossy; gray is written as RGB.
inline std::string encode_webp(const cv::Mat& m, int quality = 101) {
  REQUIRE(m.depth() == CV_8U);
  cv::Mat c = m;
  if (m.channels() == 1) cv::merge(std::vector<cv::Mat>{m, m, m}, c);
  std::vector<unsigned char> rgb;
  for (int y = 0; y < c.rows; ++y) {
    std::vector<unsigned char> row = file_row(c, y);
    rgb.insert(rgb.end(), row.begin(), row.end());
  }
  uint8_t* out = nullptr;
  const int stride = c.cols * c.channels();
  size_t n = 0;
  if (c.channels() == 4)
    n = quality > 100 ? WebPEncodeLosslessRGBA(rgb.data(), c.cols, c.rows, stride, &out)
                      : WebPEncodeRGBA(rgb.data(), c.cols, c.rows, stride, quality, &out);
  else
    n = quality > 100 ? WebPEncodeLosslessRGB(rgb.data(), c.cols, c.rows, stride, &out)
                      : WebPEncodeRGB(rgb.data(), c.cols, c.rows, stride, quality, &out);
  REQUIRE(n > 0);
  std::string bytes(reinterpret_cast<char*>(out), n);
  WebPFree(out);
  return bytes;
}

inline std::string le_bytes(uint32_t v, int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += static_cast<char>(v >> 8 * k);
  return s;
}

// A 40-byte-header BMP as OpenCV wrote them: gray with a gray palette (8 bits), BGR (24) or
// BGRA (32), rows bottom-up padded to 4 bytes.
inline std::string encode_bmp(const cv::Mat& m) {
  REQUIRE(m.depth() == CV_8U);
  const int ch = m.channels();
  const size_t pitch = (m.cols * ch + 3) & ~size_t{3};
  const size_t palette = ch == 1 ? 1024 : 0, offset = 14 + 40 + palette;
  std::string s = "BM" + le_bytes(offset + pitch * m.rows, 4) + le_bytes(0, 4) + le_bytes(offset, 4);
  s += le_bytes(40, 4) + le_bytes(m.cols, 4) + le_bytes(m.rows, 4) + le_bytes(1, 2) + le_bytes(8 * ch, 2) + std::string(24, '\0');
  for (int i = 0; palette && i < 256; ++i) s += std::string(3, static_cast<char>(i)) + '\0';
  for (int y = m.rows - 1; y >= 0; --y)
    s += std::string(m.ptr<char>(y), m.cols * ch) + std::string(pitch - m.cols * ch, '\0');
  return s;
}

}  // namespace sv::test
