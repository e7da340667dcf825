// decode_image over JPEG, TIFF, BMP and WebP (raster/codecs/): the pixels of each format as the
// PNG path gives them, the header's claims checked before decoding, and every corrupt or
// truncated file refused. The files are written here with the codec libraries' encoders
// (image_files.hpp) or by hand, hostile ones from a fixed seed.
#include <catch2/catch.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "image_files.hpp"
#include "raster/codecs/codec.hpp"
#include "raster/image.hpp"
#include "raster/png.hpp"

using namespace sv;
using sv::test::encode_bmp;
using sv::test::encode_jpeg;
using sv::test::encode_tiff;
using sv::test::encode_webp;
using sv::test::JpegOptions;
using sv::test::le_bytes;
using sv::test::TiffOptions;

namespace {

std::vector<int> pixels(const cv::Mat& m) {
  std::vector<int> v;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) v.push_back(m.at<uchar>(y, x));
  return v;
}

// Smooth colour gradients (JPEG's loss stays small) and one black block.
cv::Mat pattern() {
  cv::Mat m(48, 64, CV_8UC3);
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) m.at<cv::Vec3b>(y, x) = {uchar(4 * x), uchar(5 * y), uchar(255 - 2 * x - 2 * y)};
  m(cv::Rect(10, 10, 12, 8)).setTo(cv::Scalar::all(0));
  return m;
}

bool same(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(a != b) == 0;
}

// The error decode_image throws; Code::internal and "" when it decodes to CV_8UC1.
std::pair<Code, std::string> image_refusal(const std::string& bytes, long long max_pixels = 100'000'000) {
  try {
    return {Code::internal, decode_image(bytes, max_pixels).type() == CV_8UC1 ? "" : "not CV_8UC1"};
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
}

std::string le(uint32_t v, int n) { return le_bytes(v, n); }
std::string be16s(uint32_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }

// A little-endian TIFF of one directory holding the given LONG fields, plus what libtiff needs to
// open it (an 8-bit gray strip at offset 8 unless given).
std::string tiff_ifd(std::vector<std::pair<uint32_t, uint32_t>> fields) {
  auto has = [&](uint32_t tag) {
    for (auto [t, v] : fields)
      if (t == tag) return true;
    return false;
  };
  if (!has(262)) fields.push_back({262, 1});  // MINISBLACK
  if (!has(273) && !has(324)) fields.push_back({273, 8}), fields.push_back({279, 1});  // one strip
  std::sort(fields.begin(), fields.end());
  std::string s = std::string("II*\0", 4) + le(8, 4) + le(fields.size(), 2);
  for (auto [tag, value] : fields) s += le(tag, 2) + le(4, 2) + le(1, 4) + le(value, 4);
  return s + le(0, 4);
}

// `jpeg` with an APP1 Exif segment holding only Orientation = o spliced in after SOI.
std::string with_orientation(const std::string& jpeg, int o, bool little_endian) {
  auto u16 = [&](uint32_t v) { return little_endian ? le(v, 2) : be16s(v); };
  auto u32 = [&](uint32_t v) { return little_endian ? u16(v & 0xFFFF) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xFFFF); };
  std::string tiff = (little_endian ? "II" : "MM") + u16(42) + u32(8) + u16(1) + u16(0x0112) + u16(3) + u32(1) +
                     u16(o) + u16(0) + u32(0);
  std::string app1 = std::string("Exif\0\0", 6) + tiff;
  return jpeg.substr(0, 2) + "\xFF\xE1" + be16s(app1.size() + 2) + app1 + jpeg.substr(2);
}

// The offset just past the first start-of-scan segment of a JPEG.
size_t scan_start(const std::string& jpeg) {
  size_t sos = jpeg.find("\xFF\xDA");
  REQUIRE(sos != std::string::npos);
  return sos + 2 + (static_cast<unsigned char>(jpeg[sos + 2]) << 8 | static_cast<unsigned char>(jpeg[sos + 3]));
}

}  // namespace

TEST_CASE("decode_image reads lossless TIFF, BMP and WebP exactly as the PNG path", "[raster][image]") {
  cv::Mat bgr = pattern();
  cv::Mat want = decode_png(encode_png_rgb(bgr));
  cv::Mat gray(37, 29, CV_8U);
  cv::randu(gray, 0, 256);
  cv::Mat bgra;
  cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
  std::vector<std::pair<std::string, std::function<std::string(const cv::Mat&)>>> writers = {
      {"tiff", [](const cv::Mat& m) { return encode_tiff(m); }},
      {"tiff lzw", [](const cv::Mat& m) { return encode_tiff(m, {COMPRESSION_LZW}); }},
      {"tiff deflate, 1 row a strip", [](const cv::Mat& m) { return encode_tiff(m, {COMPRESSION_ADOBE_DEFLATE, 0, 1}); }},
      {"tiff tiled", [](const cv::Mat& m) { return encode_tiff(m, {COMPRESSION_LZW, 16}); }},
      {"tiff planar", [](const cv::Mat& m) { return encode_tiff(m, {COMPRESSION_NONE, 0, 5, true}); }},
      {"tiff planar tiled", [](const cv::Mat& m) { return encode_tiff(m, {COMPRESSION_LZW, 32, 0, true}); }},
      {"bmp", [](const cv::Mat& m) { return encode_bmp(m); }},
      {"webp", [](const cv::Mat& m) { return encode_webp(m); }},
  };
  for (auto& [name, write] : writers) {
    INFO(name);
    std::string colour = write(bgr);
    CHECK(same(decode_image(colour), want));
    CHECK(image_size(colour) == cv::Size(64, 48));
    CHECK(same(decode_image(write(gray)), gray));
    if (name != "bmp") CHECK(same(decode_image(write(bgra)), want));  // opaque alpha
  }
  // A 32-bit BMP whose fourth bytes are all 0 (most writers leave them unused) is opaque.
  std::string zero_alpha = encode_bmp(bgra);
  for (size_t i = 54 + 3; i < zero_alpha.size(); i += 4) zero_alpha[i] = 0;
  CHECK(same(decode_image(zero_alpha), want));
  std::string png = encode_png_rgb(bgr);  // PNG still goes through libpng
  CHECK(same(decode_image(png), decode_png(png)));
  CHECK(image_size(png) == cv::Size(64, 48));
}

TEST_CASE("decode_image reads gray TIFF of 1 to 16 bits, white or black as zero, and palettes", "[raster][image]") {
  // Bilevel and 4-bit gray, packed most significant bit first, written by hand.
  auto packed = [](int bps, uint32_t photometric, std::initializer_list<unsigned char> data, int w) {
    std::string s = tiff_ifd({{256, static_cast<uint32_t>(w)}, {257, 1}, {258, static_cast<uint32_t>(bps)}, {262, photometric},
                              {273, 8 + 2 + 12 * 8 + 4}, {279, static_cast<uint32_t>(data.size())}, {278, 1}, {277, 1}});
    return s + std::string(data.begin(), data.end());
  };
  CHECK(pixels(decode_image(packed(1, 1, {0b10100000}, 4))) == std::vector<int>{255, 0, 255, 0});
  CHECK(pixels(decode_image(packed(1, 0, {0b10100000}, 4))) == std::vector<int>{0, 255, 0, 255});
  CHECK(pixels(decode_image(packed(4, 1, {0x0F, 0x84}, 4))) == std::vector<int>{0, 255, 136, 68});
  CHECK(pixels(decode_image(packed(4, 0, {0x0F, 0x84}, 4))) == std::vector<int>{255, 0, 119, 187});
  cv::Mat g16 = (cv::Mat_<uint16_t>(1, 3) << 0, 1000, 65535);
  CHECK(pixels(decode_image(encode_tiff(g16, {.photometric = PHOTOMETRIC_MINISWHITE}))) == std::vector<int>{255, 251, 0});
  cv::Mat g8 = (cv::Mat_<uchar>(1, 3) << 0, 100, 255);
  CHECK(pixels(decode_image(encode_tiff(g8, {.photometric = PHOTOMETRIC_MINISWHITE}))) == std::vector<int>{255, 155, 0});

  // A 2-bit palette: red, black, 50 % gray, white, in 16-bit colour-map entries.
  std::string pal = tiff_ifd({{256, 4}, {257, 1}, {258, 2}, {262, 3}, {273, 8 + 2 + 12 * 9 + 4}, {279, 1}, {278, 1},
                              {277, 1}, {320, 8 + 2 + 12 * 9 + 4 + 1}});
  // 320 is SHORT[12], not LONG: patch its type and count.
  const size_t e = pal.find(le(320, 2));
  pal.replace(e + 2, 6, le(3, 2) + le(12, 4));
  pal += std::string(1, static_cast<char>(0b00011011));
  for (uint32_t v : {0xFFFFu, 0u, 0x8000u, 0xFFFFu, 0u, 0u, 0x8000u, 0xFFFFu, 0u, 0u, 0x8000u, 0xFFFFu}) pal += le(v, 2);
  CHECK(pixels(decode_image(pal)) == std::vector<int>{76, 0, 128, 255});
}

TEST_CASE("decode_image reads JPEG as libjpeg decodes it, within JPEG's loss of the PNG", "[raster][image]") {
  cv::Mat bgr = pattern();
  cv::Mat want = decode_png(encode_png_rgb(bgr));
  for (JpegOptions o : {JpegOptions{95}, JpegOptions{95, true}, JpegOptions{95, false, true}}) {
    INFO("progressive " << o.progressive << " cmyk " << o.cmyk);
    std::string jpeg = encode_jpeg(bgr, o);
    CHECK(jpeg.substr(0, 3) == "\xFF\xD8\xFF");
    cv::Mat got = decode_image(jpeg);
    REQUIRE(got.size() == want.size());
    REQUIRE(got.type() == CV_8UC1);
    // Ringing at the black block's edges reaches ~17 levels at quality 95; elsewhere it is ~0.
    CHECK(cv::norm(got, want, cv::NORM_INF) <= 24);
    // CMYK's conversion (k - (255 - c) k / 256, as OpenCV's) darkens by up to one level.
    CHECK(cv::norm(got, want, cv::NORM_L1) / got.total() < (o.cmyk ? 1.5 : 1.0));
    CHECK(image_size(jpeg) == cv::Size(64, 48));
  }
  cv::Mat gray = want.clone();
  CHECK(cv::norm(decode_image(encode_jpeg(gray)), gray, cv::NORM_INF) <= 24);
  // A progressive JPEG gives the baseline one's pixels when its coefficients are the same (gray,
  // quality 100 quantizes both alike).
  CHECK(same(decode_image(encode_jpeg(gray, {100})), decode_image(encode_jpeg(gray, {100, true}))));
}

TEST_CASE("decode_image scales 16-bit samples by 1/257 and composites alpha on white", "[raster][image]") {
  cv::Mat g16 = (cv::Mat_<uint16_t>(1, 6) << 0, 128, 129, 25828, 65535, 1000);
  CHECK(pixels(decode_image(encode_tiff(g16))) == std::vector<int>{0, 0, 1, 100, 255, 4});
  cv::Mat c16(1, 4, CV_16UC3), a16(1, 4, CV_16UC4);
  c16.at<cv::Vec3w>(0, 0) = {0, 0, 65535}, c16.at<cv::Vec3w>(0, 1) = {0, 65535, 0};
  c16.at<cv::Vec3w>(0, 2) = {65535, 0, 0}, c16.at<cv::Vec3w>(0, 3) = {0, 0, 0};
  CHECK(pixels(decode_image(encode_tiff(c16))) == std::vector<int>{76, 150, 29, 0});
  a16.at<cv::Vec4w>(0, 0) = {0, 0, 65535, 65535}, a16.at<cv::Vec4w>(0, 1) = {0, 0, 0, 0};
  a16.at<cv::Vec4w>(0, 2) = {0, 0, 0, 0x8080}, a16.at<cv::Vec4w>(0, 3) = {0, 0, 65535, 0x8080};
  CHECK(pixels(decode_image(encode_tiff(a16))) == std::vector<int>{76, 255, 127, 165});

  cv::Mat a8(1, 5, CV_8UC4);
  a8.at<cv::Vec4b>(0, 0) = {0, 0, 255, 255}, a8.at<cv::Vec4b>(0, 1) = {0, 0, 0, 0};
  a8.at<cv::Vec4b>(0, 2) = {0, 0, 0, 128}, a8.at<cv::Vec4b>(0, 3) = {255, 255, 255, 0};
  a8.at<cv::Vec4b>(0, 4) = {0, 0, 255, 128};  // red at half alpha: on white, 165
  for (auto [name, bytes] : {std::pair{"tiff", encode_tiff(a8)}, std::pair{"webp", encode_webp(a8)}, std::pair{"bmp", encode_bmp(a8)}}) {
    INFO(name);
    CHECK(pixels(decode_image(bytes)) == std::vector<int>{76, 255, 127, 255, 165});
  }
  // Associated (premultiplied) alpha: the colour is already scaled, only the white is added.
  cv::Mat p8(1, 2, CV_8UC4);
  p8.at<cv::Vec4b>(0, 0) = {0, 0, 128, 128}, p8.at<cv::Vec4b>(0, 1) = {0, 0, 0, 0};
  CHECK(pixels(decode_image(encode_tiff(p8, {.alpha = EXTRASAMPLE_ASSOCALPHA}))) == std::vector<int>{165, 255});
  // Gray+alpha, in PNG and TIFF alike.
  cv::Mat ga(1, 3, CV_8UC2);
  ga.at<cv::Vec2b>(0, 0) = {0, 0}, ga.at<cv::Vec2b>(0, 1) = {0, 255}, ga.at<cv::Vec2b>(0, 2) = {0, 128};
  CHECK(pixels(decode_image(encode_tiff(ga))) == std::vector<int>{255, 0, 127});
}

TEST_CASE("decode_image applies a JPEG's EXIF orientation", "[raster][image]") {
  cv::Mat stored(20, 40, CV_8UC3, cv::Scalar::all(255));
  stored(cv::Rect(0, 0, 10, 5)).setTo(cv::Scalar::all(0));  // dark block at the stored top left
  std::string jpeg = encode_jpeg(stored);
  cv::Mat plain = decode_image(jpeg);
  REQUIRE(plain.size() == cv::Size(40, 20));
  for (int o = 1; o <= 8; ++o) {
    cv::Mat want;
    switch (o) {
      case 2: cv::flip(plain, want, 1); break;
      case 3: cv::rotate(plain, want, cv::ROTATE_180); break;
      case 4: cv::flip(plain, want, 0); break;
      case 5: cv::transpose(plain, want); break;
      case 6: cv::rotate(plain, want, cv::ROTATE_90_CLOCKWISE); break;
      case 7: cv::transpose(plain, want), cv::flip(want, want, -1); break;
      case 8: cv::rotate(plain, want, cv::ROTATE_90_COUNTERCLOCKWISE); break;
      default: want = plain;
    }
    for (bool little_endian : {false, true}) {
      INFO("orientation " << o << (little_endian ? " II" : " MM"));
      std::string rotated = with_orientation(jpeg, o, little_endian);
      CHECK(same(decode_image(rotated), want));
      CHECK(image_size(rotated) == cv::Size(40, 20));  // as stored
    }
  }
  // Orientation 6 (the phone held upright): the stored top left ends at the top right.
  cv::Mat six = decode_image(with_orientation(jpeg, 6, false));
  CHECK(six.at<uchar>(2, 17) < 64);
  CHECK(six.at<uchar>(2, 2) > 192);
  CHECK(six.at<uchar>(37, 17) > 192);
  // A value out of range, or an EXIF segment cut short, leaves the image as stored.
  CHECK(same(decode_image(with_orientation(jpeg, 9, true)), plain));
  std::string cut = with_orientation(jpeg, 6, true);
  cut.replace(4, 2, be16s(2 + 6 + 8));  // the segment ends inside IFD0
  cut.erase(4 + 2 + 6 + 8, with_orientation(jpeg, 6, true).size() - jpeg.size() - 4 - 6 - 8);
  CHECK(same(decode_image(cut), plain));
}

TEST_CASE("decode_image refuses truncated, corrupt and unknown bytes with invalid_raster", "[raster][image]") {
  cv::Mat bgr = pattern();
  CHECK(image_refusal("").second.find("0 bytes") != std::string::npos);
  auto [code, message] = image_refusal("GIF89a and the rest");
  CHECK(code == Code::invalid_raster);
  CHECK(message.find("PNG, JPEG, TIFF, BMP or WebP") != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);

  std::mt19937 rng(7);
  for (auto [name, whole] : {std::pair{"jpeg", encode_jpeg(bgr)}, std::pair{"progressive jpeg", encode_jpeg(bgr, {95, true})},
                             std::pair{"tiff", encode_tiff(bgr)}, std::pair{"tiff lzw", encode_tiff(bgr, {COMPRESSION_LZW})},
                             std::pair{"tiff tiled", encode_tiff(bgr, {COMPRESSION_ADOBE_DEFLATE, 16})},
                             std::pair{"bmp", encode_bmp(bgr)}, std::pair{"webp", encode_webp(bgr, 90)},
                             std::pair{"webp lossless", encode_webp(bgr)}}) {
    INFO(name);
    for (size_t keep : {size_t(3), size_t(20), whole.size() / 4, whole.size() / 2, whole.size() * 3 / 4, whole.size() - 2}) {
      INFO("first " << keep << " of " << whole.size() << " bytes");
      auto [c, m] = image_refusal(whole.substr(0, keep));
      CHECK(c == Code::invalid_raster);
      CHECK(m.find('\n') == std::string::npos);
    }
    // Random bytes behind the format's signature, and random damage to a whole file: refused
    // or decoded, never a crash.
    for (int trial = 0; trial < 60; ++trial) {
      std::string bytes = whole;
      if (trial < 20) {
        std::uniform_int_distribution<int> byte(0, 255);
        for (size_t i = 12; i < bytes.size(); ++i) bytes[i] = static_cast<char>(byte(rng));
      } else {
        for (int k = 0; k < 1 + trial % 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
      auto [c, m] = image_refusal(bytes);
      CHECK((c == Code::invalid_raster || (c == Code::internal && m.empty())));
    }
  }
}

TEST_CASE("a JPEG cut short with its end marker put back, or with garbage in its scan, is refused", "[raster][image][hostile]") {
  // libjpeg decodes both with a warning only, into a partly gray or scrambled image that sv
  // then traced; a warning is now an error.
  cv::Mat bgr;
  cv::resize(pattern(), bgr, {256, 192});
  for (JpegOptions o : {JpegOptions{90}, JpegOptions{90, true}}) {
    INFO("progressive " << o.progressive);
    const std::string whole = encode_jpeg(bgr, o);
    REQUIRE(decode_image(whole).size() == cv::Size(256, 192));
    auto [code, message] = image_refusal(whole.substr(0, whole.size() / 2) + "\xFF\xD9");
    CHECK(code == Code::invalid_raster);
    CHECK(message.find("not a readable JPEG") != std::string::npos);
    // Garbage is refused when libjpeg notices it: a bad Huffman code, or a scan that ends before
    // or after its data does. JPEG has no checksum, and Huffman codes fall back in step after a
    // while, so garbage that happens to leave the scan its length decodes unnoticed, as in any
    // JPEG reader: with a fixed seed, 16 of 20 baseline and 18 of 20 progressive files.
    const size_t start = scan_start(whole);
    std::mt19937 rng(11);
    int refused = 0;
    for (int trial = 0; trial < 20; ++trial) {
      std::string garbled = whole;
      const size_t at = start + rng() % ((whole.size() - start) / 2), n = 16 + rng() % 64;
      for (size_t i = at; i < at + n; ++i) garbled[i] = static_cast<char>(rng() % 255);  // no 0xFF: no marker
      refused += image_refusal(garbled).first == Code::invalid_raster;
    }
    CHECK(refused >= 16);
  }
}

TEST_CASE("a progressive JPEG of more scans than the limit is refused", "[raster][image][hostile]") {
  cv::Mat gray = decode_png(encode_png_gray(cv::Mat(64, 64, CV_8U, cv::Scalar(200))));
  cv::circle(gray, {32, 32}, 20, cv::Scalar(0), 3);
  const std::string many = encode_jpeg(gray, {.many_scans = true});  // 127 scans, valid
  auto [code, message] = image_refusal(many);
  CHECK(code == Code::invalid_raster);
  CHECK(message.find("more than " + std::to_string(codec::kMaxJpegScans) + " scans") != std::string::npos);
  CHECK(decode_image(encode_jpeg(gray, {95, true})).size() == cv::Size(64, 64));  // 6 scans
}

TEST_CASE("a TIFF whose tiles are far larger than its image is refused before a tile is read", "[raster][image][hostile]") {
  // 16x16 pixels in one 12288x12288 tile: OpenCV's reader allocated and filled 576 MiB for it.
  std::string bomb = tiff_ifd({{256, 16}, {257, 16}, {258, 8}, {322, 12288}, {323, 12288}, {324, 8}, {325, 4}});
  auto [code, message] = image_refusal(bomb);
  CHECK(code == Code::invalid_raster);
  CHECK(message.find("tiles of 12288x12288 pixels") != std::string::npos);
  cv::Mat gray(40, 40, CV_8U, cv::Scalar(90));
  CHECK(decode_image(encode_tiff(gray, {COMPRESSION_NONE, 16})).size() == cv::Size(40, 40));
  // A writer's fixed 256 px tiles on a small image are fine.
  CHECK(decode_image(encode_tiff(gray, {COMPRESSION_LZW, 256})).size() == cv::Size(40, 40));
  CHECK(image_refusal(tiff_ifd({{256, 16}, {257, 16}, {258, 8}, {322, 4096}, {323, 4096}, {324, 8}, {325, 4}})).first ==
        Code::invalid_raster);
}

TEST_CASE("decode_image reads BMP as OpenCV did: RLE, 16-bit, top-down, OS/2", "[raster][image]") {
  // 4x2 RLE8, palette 0 black, 1 white, 2 gray 128: bottom row "1 1 2 2", top row "2" then end.
  auto bmp8 = [](uint32_t compression, int bpp, const std::string& data, int width, int height) {
    std::string palette;
    for (int v : {0, 255, 128}) palette += std::string(3, static_cast<char>(v)) + '\0';
    const size_t offset = 14 + 40 + palette.size();
    return "BM" + le(offset + data.size(), 4) + le(0, 4) + le(offset, 4) + le(40, 4) + le(width, 4) + le(height, 4) +
           le(1, 2) + le(bpp, 2) + le(compression, 4) + le(data.size(), 4) + le(0, 4) + le(0, 4) + le(3, 4) + le(0, 4) +
           palette + data;
  };
  const std::string rle8 = std::string("\x02\x01\x02\x02\x00\x00\x01\x02\x00\x01", 10);
  CHECK(pixels(decode_image(bmp8(1, 8, rle8, 4, 2))) == std::vector<int>{128, 0, 0, 0, 255, 255, 128, 128});
  // RLE4: a run alternates its two indices; absolute mode holds packed nibbles.
  const std::string rle4 = std::string("\x04\x12\x00\x00\x00\x04\x21\x10\x00\x01", 10);
  CHECK(pixels(decode_image(bmp8(2, 4, rle4, 4, 2))) == std::vector<int>{128, 255, 255, 0, 255, 128, 255, 128});
  // A run past its row, or data that stops before the end of the bitmap, is refused.
  CHECK(image_refusal(bmp8(1, 8, std::string("\x05\x01\x00\x01", 4), 4, 2)).first == Code::invalid_raster);
  CHECK(image_refusal(bmp8(1, 8, std::string("\x02\x01", 2), 4, 2)).first == Code::invalid_raster);
  // Top-down 8-bit rows (negative height), and 16-bit 5-5-5 (samples shifted up, as OpenCV did).
  CHECK(pixels(decode_image(bmp8(0, 8, std::string("\x01\x02\x00\x00\x00\x01\x01\x00", 8), 2, -2))) ==
        std::vector<int>{255, 128, 0, 255});
  std::string s16 = "BM" + le(14 + 40 + 4, 4) + le(0, 4) + le(54, 4) + le(40, 4) + le(2, 4) + le(1, 4) + le(1, 2) + le(16, 2) +
                    std::string(24, '\0') + le(0x7C00, 2) + le(0x001F, 2);
  CHECK(pixels(decode_image(s16)) == std::vector<int>{74, 28});  // red 248, blue 248
  // OS/2's 12-byte header with a 3-byte palette entry per colour.
  std::string os2 = "BM" + le(14 + 12 + 6 + 4, 4) + le(0, 4) + le(14 + 12 + 6, 4) + le(12, 4) + le(2, 2) + le(1, 2) +
                    le(1, 2) + le(1, 2) + std::string("\0\0\0\xFF\xFF\xFF", 6) + std::string("\x40\0\0\0", 4);
  CHECK(pixels(decode_image(os2)) == std::vector<int>{0, 255});
}

TEST_CASE("decode_image refuses oversized headers before decoding", "[raster][image]") {
  auto be = [](uint32_t v) { return be16s(v); };
  std::string jpeg_sof = std::string("\xFF\xD8\xFF\xC0", 4) + be(17) + '\x08' + be(65535) + be(65535) + '\x03' +
                         std::string(9, '\x01');
  std::string bmp = "BM" + le(0, 4) + le(0, 4) + le(54, 4) + le(40, 4) + le(200000, 4) + le(200000, 4) + le(1, 2) + le(24, 2);
  std::string webp = "RIFF" + le(22, 4) + "WEBPVP8X" + le(10, 4) + le(0, 4) + le(199999, 3) + le(199999, 3);
  std::string tiff = tiff_ifd({{256, 200000}, {257, 200000}});
  // Headers with no pixel data: image_size reads them, decode_image refuses them by their size
  // (the message names it), not by their missing data.
  for (auto [bytes, claim] : {std::pair{jpeg_sof, "65535x65535"}, std::pair{bmp, "200000x200000"},
                              std::pair{webp, "200000x200000"}, std::pair{tiff, "200000x200000"}}) {
    INFO(claim);
    auto [code, message] = image_refusal(bytes);
    CHECK(code == Code::invalid_raster);
    CHECK(message.find(claim) != std::string::npos);
    CHECK(message.find("limit") != std::string::npos);
    cv::Size claimed = image_size(bytes, 1LL << 40);
    CHECK(static_cast<long long>(claimed.width) * claimed.height > 4'000'000'000LL);
  }
  CHECK(image_size(tiff_ifd({{256, 4000}, {257, 3000}})) == cv::Size(4000, 3000));  // a phone photo is fine
  std::string vp8l = "RIFF" + le(0, 4) + "WEBPVP8L" + le(5, 4) + '\x2f' + le((4000 - 1) | (3000 - 1) << 14, 4);
  CHECK(image_size(vp8l) == cv::Size(4000, 3000));
  // A 49-megapixel JPEG header (within the budget) with nothing behind it: refused at once.
  std::string big = std::string("\xFF\xD8", 2) + encode_jpeg(cv::Mat(8, 8, CV_8U, cv::Scalar(0))).substr(2);
  const size_t sof = big.find("\xFF\xC0");
  big.replace(sof + 5, 4, be(7000) + be(7000));
  auto [code, message] = image_refusal(big.substr(0, scan_start(big) + 10));
  CHECK(code == Code::invalid_raster);
  CHECK(message.find("remature end") != std::string::npos);  // of the file, or of the scan
  // Whole files against a small limit.
  for (auto [name, whole] : {std::pair{"jpeg", encode_jpeg(pattern())}, std::pair{"tiff", encode_tiff(pattern())},
                             std::pair{"bmp", encode_bmp(pattern())}, std::pair{"webp", encode_webp(pattern())}}) {
    INFO(name);
    auto [code, message] = image_refusal(whole, 3000);
    CHECK(code == Code::invalid_raster);
    CHECK(message.find("64x48") != std::string::npos);
    CHECK(decode_image(whole, 3072).size() == cv::Size(64, 48));
  }
}

TEST_CASE("a PNG whose chunk claims more bytes than the file holds is refused before libpng reads it",
          "[raster][image][hostile]") {
  // A tEXt chunk claiming 1.9 GB after the header of a 512x512 PNG (the fuzzer's find): libpng
  // allocates a text chunk's claimed length before reading it.
  const std::string whole = encode_png_gray(cv::Mat(512, 512, CV_8UC1, cv::Scalar(255)));
  std::string bytes = whole.substr(0, 33) + std::string("\x70\x00\x01\x32tEXtComment", 15) + std::string(360, 'x');
  auto [code, message] = image_refusal(bytes);
  CHECK(code == Code::invalid_raster);
  CHECK(message.find("chunk tEXt claims 1879048498 bytes") != std::string::npos);
  // The same file whole still decodes, and one cut inside its image data is refused.
  CHECK(image_refusal(whole).first == Code::internal);
  CHECK(image_refusal(whole).second.empty());
  CHECK(image_refusal(whole.substr(0, whole.size() - 20)).first == Code::invalid_raster);
}
