// TIFF through libtiff: the first page; gray (1 to 16 bits, black or white is zero), palette (1
// to 8 bits), RGB (8 or 16 bits, JPEG-compressed YCbCr given as RGB by libtiff), each with an
// alpha sample or not, in strips or tiles, interleaved or planar, any compression libtiff reads;
// the Orientation tag applied. Samples are read a row, a strip or a tile at a time and turned to
// gray as they come, so memory is the image's gray plus one tile or strip (kMaxTiffChunkBytes).
//
// libtiff is loaded when the first TIFF comes (dlopen), not linked: it brings eight libraries of
// its own (libjbig among them, whose GPL would bind a static copy), which every sv process would
// otherwise load at its start for the few inputs that are TIFFs.
#include <dlfcn.h>
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "raster/codecs/codec.hpp"
#include "raster/png.hpp"

#ifndef SV_LIBTIFF_SONAME
#define SV_LIBTIFF_SONAME "libtiff.so.6"
#endif

namespace sv::codec {
namespace {

constexpr const char* kTiff = "TIFF";

// The libtiff functions sv calls, resolved once.
struct Api {
  decltype(&TIFFOpenOptionsAlloc) options_alloc;
  decltype(&TIFFOpenOptionsFree) options_free;
  decltype(&TIFFOpenOptionsSetMaxSingleMemAlloc) options_max_alloc;
  decltype(&TIFFOpenOptionsSetErrorHandlerExtR) options_error;
  decltype(&TIFFOpenOptionsSetWarningHandlerExtR) options_warning;
  decltype(&TIFFClientOpenExt) client_open;
  decltype(&TIFFClose) close;
  decltype(&TIFFGetField) get;
  decltype(&TIFFGetFieldDefaulted) get_defaulted;
  decltype(&TIFFSetField) set;
  decltype(&TIFFIsTiled) is_tiled;
  decltype(&TIFFScanlineSize64) scanline_size;
  decltype(&TIFFTileSize64) tile_size;
  decltype(&TIFFStripSize64) strip_size;
  decltype(&TIFFReadScanline) read_scanline;
  decltype(&TIFFReadTile) read_tile;
  decltype(&TIFFReadEncodedStrip) read_strip;
  decltype(&TIFFComputeStrip) compute_strip;
};

const Api& api() {
  static std::string failure;
  static const Api* loaded = []() -> const Api* {
    void* h = dlopen(SV_LIBTIFF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      failure = dlerror();
      return nullptr;
    }
    static Api a;
    bool ok = true;
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn) ok = false, failure = std::string("no ") + name + " in " SV_LIBTIFF_SONAME;
    };
    bind(a.options_alloc, "TIFFOpenOptionsAlloc");
    bind(a.options_free, "TIFFOpenOptionsFree");
    bind(a.options_max_alloc, "TIFFOpenOptionsSetMaxSingleMemAlloc");
    bind(a.options_error, "TIFFOpenOptionsSetErrorHandlerExtR");
    bind(a.options_warning, "TIFFOpenOptionsSetWarningHandlerExtR");
    bind(a.client_open, "TIFFClientOpenExt");
    bind(a.close, "TIFFClose");
    bind(a.get, "TIFFGetField");
    bind(a.get_defaulted, "TIFFGetFieldDefaulted");
    bind(a.set, "TIFFSetField");
    bind(a.is_tiled, "TIFFIsTiled");
    bind(a.scanline_size, "TIFFScanlineSize64");
    bind(a.tile_size, "TIFFTileSize64");
    bind(a.strip_size, "TIFFStripSize64");
    bind(a.read_scanline, "TIFFReadScanline");
    bind(a.read_tile, "TIFFReadTile");
    bind(a.read_strip, "TIFFReadEncodedStrip");
    bind(a.compute_strip, "TIFFComputeStrip");
    return ok ? &a : nullptr;
  }();
  if (!loaded) throw Error(Code::internal, "cannot decode TIFF: libtiff could not be loaded (" + failure + ")");
  return *loaded;
}

}  // namespace

// libtiff's own version line ("4.5.0"), asked of the library (loaded here if no TIFF came yet), or
// why it cannot be: named by --version (cli/version.cpp) in executables that read images.
std::string tiff_library_version() {
  void* h = dlopen(SV_LIBTIFF_SONAME, RTLD_LAZY | RTLD_LOCAL);
  if (!h) return "not installed (" SV_LIBTIFF_SONAME ")";
  auto get = reinterpret_cast<const char* (*)()>(dlsym(h, "TIFFGetVersion"));
  std::string v = get ? get() : "";
  dlclose(h);
  // "LIBTIFF, Version 4.5.0\nCopyright ..."
  const size_t at = v.find("Version ");
  if (at == std::string::npos) return "unknown";
  v = v.substr(at + 8);
  return v.substr(0, v.find_first_of(" \n"));
}

namespace {

// The bytes as libtiff's file, mapped (libtiff then reads strips in place).
struct Source {
  const unsigned char* data = nullptr;
  toff_t size = 0, pos = 0;
  char message[200] = "";
};

tmsize_t on_read(thandle_t h, void* buf, tmsize_t n) {
  auto* s = static_cast<Source*>(h);
  const toff_t k = std::min<toff_t>(static_cast<toff_t>(n), s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t on_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t on_seek(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<Source*>(h);
  const toff_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->size : 0;
  s->pos = off > s->size - std::min(base, s->size) ? s->size : base + off;
  return s->pos;
}
int on_close(thandle_t) { return 0; }
toff_t on_size(thandle_t h) { return static_cast<Source*>(h)->size; }
int on_map(thandle_t h, void** base, toff_t* size) {
  auto* s = static_cast<Source*>(h);
  *base = const_cast<unsigned char*>(s->data);
  *size = s->size;
  return 1;
}
void on_unmap(thandle_t, void*, toff_t) {}

// libtiff's first error is the refusal's reason; its warnings (unknown tags...) are dropped.
int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* s = static_cast<Source*>(user);
  if (!s->message[0]) std::vsnprintf(s->message, sizeof s->message, fmt, ap);
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct Tiff {
  Source src;
  TIFF* tif = nullptr;
  explicit Tiff(std::string_view bytes) {
    const Api& a = api();
    src.data = reinterpret_cast<const unsigned char*>(bytes.data());
    src.size = bytes.size();
    TIFFOpenOptions* opts = a.options_alloc();
    if (!opts) throw Error(Code::internal, "libtiff could not be initialised");
    a.options_max_alloc(opts, kMaxTiffAlloc);
    a.options_error(opts, on_error, &src);
    a.options_warning(opts, on_warning, &src);
    tif = a.client_open("input", "r", &src, on_read, on_write, on_seek, on_close, on_size, on_map, on_unmap, opts);
    a.options_free(opts);
    if (!tif) fail("cannot read its header");
  }
  ~Tiff() {
    if (tif) api().close(tif);
  }
  Tiff(const Tiff&) = delete;
  Tiff& operator=(const Tiff&) = delete;
  [[noreturn]] void fail(const std::string& otherwise) const { refuse(kTiff, src.message[0] ? src.message : otherwise); }
  template <class T>
  T field(uint32_t tag) const {
    T v{};
    api().get_defaulted(tif, tag, &v);
    return v;
  }
};

// How a row of samples becomes gray.
struct Layout {
  int bps = 8, spp = 1, colour = 1;  // bits per sample, samples per pixel, colour samples (1 or 3)
  bool palette = false, inverted = false;
  int alpha = 0;  // 0 none, EXTRASAMPLE_ASSOCALPHA or EXTRASAMPLE_UNASSALPHA
  unsigned char pal[256] = {};
};

unsigned sample(const Layout& l, const unsigned char* row, size_t i) {
  if (l.bps == 16) {
    uint16_t v;
    std::memcpy(&v, row + 2 * i, 2);  // libtiff gives host byte order
    return v;
  }
  if (l.bps == 8) return row[i];
  const size_t bit = i * l.bps;
  return row[bit / 8] >> (8 - l.bps - bit % 8) & ((1u << l.bps) - 1);
}

// A sample as 8 bits: 16-bit rounded, fewer bits spread over 0-255 as libtiff does.
unsigned level(const Layout& l, unsigned v) {
  if (l.bps == 16) return to8(v);
  if (l.bps == 8) return v;
  return v * 255 / ((1u << l.bps) - 1);
}

void row_to_gray(const Layout& l, const unsigned char* row, int n, unsigned char* out) {
  const unsigned top = (1u << l.bps) - 1;  // MINISWHITE: this is black
  for (int x = 0; x < n; ++x) {
    const size_t i = static_cast<size_t>(x) * l.spp;
    unsigned g;
    if (l.palette) g = l.pal[sample(l, row, i) & 0xFF];
    else if (l.colour == 3) g = luma601(level(l, sample(l, row, i)), level(l, sample(l, row, i + 1)), level(l, sample(l, row, i + 2)));
    else g = level(l, l.inverted ? top - sample(l, row, i) : sample(l, row, i));
    if (l.alpha) {
      const unsigned a = level(l, sample(l, row, i + l.colour));
      // Associated alpha: the colour is already multiplied by it.
      g = l.alpha == EXTRASAMPLE_ASSOCALPHA ? std::min(255u, g + 255 - a) : on_white(g, a);
    }
    out[x] = static_cast<unsigned char>(g);
  }
}

Layout layout(const Tiff& t) {
  const Api& a = api();
  Layout l;
  uint16_t photometric = 0;
  if (!a.get(t.tif, TIFFTAG_PHOTOMETRIC, &photometric)) t.fail("no photometric interpretation");
  l.bps = t.field<uint16_t>(TIFFTAG_BITSPERSAMPLE);
  l.spp = t.field<uint16_t>(TIFFTAG_SAMPLESPERPIXEL);
  if (t.field<uint16_t>(TIFFTAG_SAMPLEFORMAT) != SAMPLEFORMAT_UINT) refuse(kTiff, "unsupported: samples that are not unsigned integers");
  const uint16_t compression = t.field<uint16_t>(TIFFTAG_COMPRESSION);
  switch (photometric) {
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_MINISBLACK:
      l.inverted = photometric == PHOTOMETRIC_MINISWHITE;
      if (l.bps != 1 && l.bps != 2 && l.bps != 4 && l.bps != 8 && l.bps != 16) refuse(kTiff, "unsupported: gray of " + std::to_string(l.bps) + " bits");
      break;
    case PHOTOMETRIC_YCBCR:
      if (compression != COMPRESSION_JPEG) refuse(kTiff, "unsupported: YCbCr samples not compressed as JPEG");
      a.set(t.tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);  // libtiff converts to RGB
      [[fallthrough]];
    case PHOTOMETRIC_RGB:
      l.colour = 3;
      if (l.bps != 8 && l.bps != 16) refuse(kTiff, "unsupported: RGB of " + std::to_string(l.bps) + " bits");
      break;
    case PHOTOMETRIC_PALETTE: {
      l.palette = true;
      if (l.bps != 1 && l.bps != 2 && l.bps != 4 && l.bps != 8) refuse(kTiff, "unsupported: a palette of " + std::to_string(l.bps) + " bits");
      uint16_t *r = nullptr, *g = nullptr, *b = nullptr;
      if (!a.get(t.tif, TIFFTAG_COLORMAP, &r, &g, &b)) t.fail("a palette image without its colour map");
      const int n = 1 << l.bps;
      // As libtiff reads them: 16-bit entries, unless every one is below 256 (a writer's 8-bit map).
      bool eight = true;
      for (int i = 0; i < n; ++i) eight = eight && r[i] < 256 && g[i] < 256 && b[i] < 256;
      for (int i = 0; i < n; ++i) {
        auto c = [&](uint16_t v) { return eight ? v : v >> 8u; };
        l.pal[i] = static_cast<unsigned char>(luma601(c(r[i]), c(g[i]), c(b[i])));
      }
      break;
    }
    default:
      refuse(kTiff, "unsupported photometric interpretation " + std::to_string(photometric) + " (save it as PNG)");
  }
  if (l.spp < l.colour || l.spp > 8) refuse(kTiff, "unsupported: " + std::to_string(l.spp) + " samples per pixel");
  if (l.spp > l.colour && !l.palette) {
    uint16_t count = 0;
    uint16_t* kinds = nullptr;
    if (a.get(t.tif, TIFFTAG_EXTRASAMPLES, &count, &kinds) && count > 0) {
      if (kinds[0] == EXTRASAMPLE_ASSOCALPHA || kinds[0] == EXTRASAMPLE_UNASSALPHA) l.alpha = kinds[0];
    } else if (l.spp == l.colour + 1) {
      l.alpha = EXTRASAMPLE_ASSOCALPHA;  // no ExtraSamples tag: libtiff's reading of a 4th sample
    }
  }
  return l;
}

cv::Mat read_pixels(const Tiff& t, const Layout& l, cv::Size size) {
  const Api& a = api();
  cv::Mat gray(size, CV_8UC1);
  const bool planar = t.field<uint16_t>(TIFFTAG_PLANARCONFIG) == PLANARCONFIG_SEPARATE && l.spp > 1;
  if (planar && l.bps < 8) refuse(kTiff, "unsupported: planar samples of fewer than 8 bits");
  const int planes = planar ? l.spp : 1;
  const size_t bytes_per_sample = l.bps / 8;
  std::vector<unsigned char> row;  // one row of interleaved samples
  // A band of rows (a tile's or a strip's), one buffer per plane, interleaved into `row`.
  auto interleave = [&](const std::vector<std::vector<unsigned char>>& band, size_t width, size_t k, int n) {
    for (int x = 0; x < n; ++x)
      for (int p = 0; p < planes; ++p)
        std::memcpy(&row[(static_cast<size_t>(x) * l.spp + p) * bytes_per_sample], &band[p][(k * width + x) * bytes_per_sample],
                    bytes_per_sample);
  };
  if (a.is_tiled(t.tif)) {
    const uint32_t tw = t.field<uint32_t>(TIFFTAG_TILEWIDTH), th = t.field<uint32_t>(TIFFTAG_TILELENGTH);
    const long long most_w = std::max<long long>(kTiffTileOverhang * size.width, kMinTiffTileSide);
    const long long most_h = std::max<long long>(kTiffTileOverhang * size.height, kMinTiffTileSide);
    const uint64_t tile_bytes = a.tile_size(t.tif);
    if (tw < 16 || th < 16 || tw > most_w || th > most_h || tile_bytes == 0 || tile_bytes > kMaxTiffChunkBytes)
      refuse(kTiff, "tiles of " + std::to_string(tw) + "x" + std::to_string(th) + " pixels (" + std::to_string(tile_bytes) +
                        " bytes) for a " + std::to_string(size.width) + "x" + std::to_string(size.height) +
                        " image: beyond the limit of 16 to " + std::to_string(most_w) + "x" + std::to_string(most_h) +
                        " pixels and " + std::to_string(kMaxTiffChunkBytes) + " bytes a tile");
    std::vector<std::vector<unsigned char>> tile(planes, std::vector<unsigned char>(tile_bytes));
    row.resize(static_cast<size_t>(tw) * l.spp * bytes_per_sample + 8);
    for (uint32_t y0 = 0; y0 < static_cast<uint32_t>(size.height); y0 += th)
      for (uint32_t x0 = 0; x0 < static_cast<uint32_t>(size.width); x0 += tw) {
        for (int p = 0; p < planes; ++p)
          if (a.read_tile(t.tif, tile[p].data(), x0, y0, 0, static_cast<uint16_t>(p)) < 0) t.fail("cannot read a tile");
        const int n = static_cast<int>(std::min<uint32_t>(tw, size.width - x0));
        const uint32_t rows = std::min<uint32_t>(th, size.height - y0);
        const size_t tile_row = tile_bytes / th;  // bytes of one row of an interleaved tile
        for (uint32_t k = 0; k < rows; ++k) {
          const unsigned char* in = tile[0].data() + k * tile_row;
          if (planar) interleave(tile, tw, k, n), in = row.data();
          row_to_gray(l, in, n, gray.ptr<unsigned char>(y0 + k) + x0);
        }
      }
    return gray;
  }
  if (!planar) {
    row.resize(a.scanline_size(t.tif) + 8);
    for (int y = 0; y < size.height; ++y) {
      if (a.read_scanline(t.tif, row.data(), y, 0) < 0) t.fail("cannot read row " + std::to_string(y));
      row_to_gray(l, row.data(), size.width, gray.ptr<unsigned char>(y));
    }
    return gray;
  }
  const uint32_t rps = std::min<uint32_t>(t.field<uint32_t>(TIFFTAG_ROWSPERSTRIP), size.height);
  const uint64_t strip_bytes = a.strip_size(t.tif);
  if (rps == 0 || strip_bytes == 0 || strip_bytes > kMaxTiffChunkBytes)
    refuse(kTiff, "strips of " + std::to_string(strip_bytes) + " bytes, beyond the limit of " + std::to_string(kMaxTiffChunkBytes));
  std::vector<std::vector<unsigned char>> strip(planes, std::vector<unsigned char>(strip_bytes));
  row.resize(static_cast<size_t>(size.width) * l.spp * bytes_per_sample + 8);
  for (uint32_t y0 = 0; y0 < static_cast<uint32_t>(size.height); y0 += rps) {
    for (int p = 0; p < planes; ++p)
      if (a.read_strip(t.tif, a.compute_strip(t.tif, y0, static_cast<uint16_t>(p)), strip[p].data(), -1) < 0)
        t.fail("cannot read a strip");
    for (uint32_t k = 0; k < std::min<uint32_t>(rps, size.height - y0); ++k) {
      interleave(strip, size.width, k, size.width);
      row_to_gray(l, row.data(), size.width, gray.ptr<unsigned char>(y0 + k));
    }
  }
  return gray;
}

// A SHORT or LONG field of the first IFD, or `absent`.
uint32_t ifd0_field(const Reader& r, uint32_t tag, uint32_t absent) {
  const size_t ifd = r.u32(4), count = r.u16(ifd);
  for (size_t k = 0; k < count; ++k) {
    const size_t e = ifd + 2 + 12 * k;
    if (r.u16(e) != tag) continue;
    const uint32_t type = r.u16(e + 2);
    return type == 3 ? r.u16(e + 8) : type == 4 ? r.u32(e + 8) : absent;
  }
  return absent;
}

}  // namespace

cv::Size tiff_size(std::string_view bytes, long long max_pixels) {
  const Reader r{bytes, kTiff, bytes.substr(0, 2) == "II"};
  return checked_size(kTiff, ifd0_field(r, TIFFTAG_IMAGEWIDTH, 0), ifd0_field(r, TIFFTAG_IMAGELENGTH, 0), max_pixels);
}

cv::Mat decode_tiff(std::string_view bytes, long long max_pixels) {
  const cv::Size size = tiff_size(bytes, max_pixels);
  Tiff t(bytes);
  uint32_t w = 0, h = 0;
  if (!api().get(t.tif, TIFFTAG_IMAGEWIDTH, &w) || !api().get(t.tif, TIFFTAG_IMAGELENGTH, &h) || cv::Size(w, h) != size)
    t.fail("the image's size differs from its first directory's");
  const Layout l = layout(t);
  return oriented(read_pixels(t, l, size), t.field<uint16_t>(TIFFTAG_ORIENTATION));
}

}  // namespace sv::codec
