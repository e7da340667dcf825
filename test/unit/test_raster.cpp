#include <png.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <opencv2/imgproc.hpp>
#include <utility>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "raster/clean.hpp"
#include "raster/ink.hpp"
#include "raster/png.hpp"
#include "raster/profile.hpp"
#include "raster/scale.hpp"
#include "raster/scan.hpp"
#include "raster/thin.hpp"
#include "skeleton_drawing.hpp"

using namespace sv;

namespace {

// Writes a PNG with libpng from raw rows (already packed for the bit depth), with an
// optional palette and tRNS chunk.
struct RawPng {
  int width = 0, height = 0, bit_depth = 8, color_type = PNG_COLOR_TYPE_GRAY;
  bool interlaced = false;
  std::vector<std::vector<unsigned char>> rows;
  std::vector<png_color> palette;
  std::vector<unsigned char> trns;

  std::string encode() const {
    std::string out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(
        png, &out,
        [](png_structp p, png_bytep d, png_size_t n) {
          static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<char*>(d), n);
        },
        nullptr);
    png_set_IHDR(png, info, width, height, bit_depth, color_type,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
    if (!trns.empty()) png_set_tRNS(png, info, trns.data(), static_cast<int>(trns.size()), nullptr);
    std::vector<png_bytep> ptrs;
    for (const auto& r : rows) ptrs.push_back(const_cast<png_bytep>(r.data()));
    png_set_rows(png, info, ptrs.data());
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);
    png_destroy_write_struct(&png, &info);
    return out;
  }
};

// One row of 16-bit samples, big-endian as PNG stores them.
std::vector<unsigned char> be16(std::initializer_list<unsigned> samples) {
  std::vector<unsigned char> row;
  for (unsigned s : samples) row.push_back(static_cast<unsigned char>(s >> 8)), row.push_back(static_cast<unsigned char>(s));
  return row;
}

std::vector<int> pixels(const cv::Mat& m) {
  std::vector<int> v;
  for (int y = 0; y < m.rows; ++y)
    for (int x = 0; x < m.cols; ++x) v.push_back(m.at<uchar>(y, x));
  return v;
}

// A PNG signature and IHDR chunk claiming the given size, and nothing more.
std::string header_only_png(uint32_t w, uint32_t h) {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  unsigned char ihdr[17] = {'I', 'H', 'D', 'R', 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) ihdr[4 + k] = static_cast<unsigned char>(w >> (24 - 8 * k));
  for (int k = 0; k < 4; ++k) ihdr[8 + k] = static_cast<unsigned char>(h >> (24 - 8 * k));
  uint32_t crc = crc32(0, ihdr, 17);
  s += std::string("\0\0\0\x0d", 4) + std::string(reinterpret_cast<char*>(ihdr), 17);
  for (int k = 0; k < 4; ++k) s += static_cast<char>(crc >> (24 - 8 * k));
  return s;
}

Code refusal(const std::string& bytes, long long max_pixels = 100'000'000) {
  try {
    decode_png(bytes, max_pixels);
  } catch (const Error& e) {
    return e.code();
  }
  return Code::internal;
}

}  // namespace

TEST_CASE("next_set finds the first set byte of a range, across words and at their edges", "[raster]") {
  for (size_t len : {0, 1, 7, 8, 9, 16, 23, 40})
    for (size_t set = 0; set <= len; ++set)  // set == len: none
      for (size_t from = 0; from <= len; ++from) {
        std::vector<unsigned char> row(len + 8, 0);
        row[len] = 1;  // beyond the range: never found
        if (set < len) row[set] = 200;
        const size_t want = set >= from && set < len ? set : len;
        CHECK(sv::next_set(row.data(), from, len) == want);
      }
}

TEST_CASE("decode_png reads gray of every bit depth", "[raster][png]") {
  RawPng p;
  p.width = 4, p.height = 1;
  p.bit_depth = 1, p.rows = {{0b10100000}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{255, 0, 255, 0});
  p.bit_depth = 2, p.rows = {{0b00011011}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{0, 85, 170, 255});
  p.bit_depth = 4, p.rows = {{0x0F, 0x84}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{0, 255, 136, 68});
  p.bit_depth = 8, p.rows = {{0, 1, 128, 255}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{0, 1, 128, 255});
  p.bit_depth = 16, p.rows = {be16({0x0000, 0x1234, 0x8080, 0xFFFF})};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{0, 18, 128, 255});
}

TEST_CASE("decode_png composites alpha on white and takes Rec. 601 luminance", "[raster][png]") {
  RawPng p;
  p.width = 3, p.height = 1;
  p.color_type = PNG_COLOR_TYPE_GRAY_ALPHA;
  p.rows = {{0, 0, 0, 255, 0, 128}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{255, 0, 127});
  p.bit_depth = 16, p.rows = {be16({0, 0, 0, 0xFFFF, 0, 0x8080})};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{255, 0, 127});

  p.color_type = PNG_COLOR_TYPE_RGB;
  p.bit_depth = 8, p.rows = {{255, 0, 0, 0, 255, 0, 0, 0, 255}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 150, 29});
  p.bit_depth = 16, p.rows = {be16({0xFFFF, 0, 0, 0, 0xFFFF, 0, 0, 0, 0xFFFF})};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 150, 29});

  p.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
  p.bit_depth = 8, p.rows = {{255, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 128}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 255, 127});
  p.bit_depth = 16, p.rows = {be16({0xFFFF, 0, 0, 0xFFFF, 0, 0, 0, 0, 0, 0, 0, 0x8080})};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 255, 127});
}

TEST_CASE("decode_png expands palettes with transparency", "[raster][png]") {
  RawPng p;
  p.width = 4, p.height = 1;
  p.color_type = PNG_COLOR_TYPE_PALETTE;
  p.palette = {{255, 0, 0}, {0, 0, 0}, {0, 0, 0}, {255, 255, 255}};
  p.trns = {255, 0, 128};  // entry 3 has no tRNS value: opaque
  p.bit_depth = 8, p.rows = {{0, 1, 2, 3}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 255, 127, 255});
  p.bit_depth = 4, p.rows = {{0x01, 0x23}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 255, 127, 255});
  p.bit_depth = 2, p.rows = {{0b00011011}};
  CHECK(pixels(decode_png(p.encode())) == std::vector<int>{76, 255, 127, 255});
}

TEST_CASE("decode_png reads interlaced images like progressive ones", "[raster][png]") {
  RawPng p;
  p.width = 13, p.height = 11;
  for (int y = 0; y < p.height; ++y) {
    p.rows.emplace_back();
    for (int x = 0; x < p.width; ++x) p.rows.back().push_back(static_cast<unsigned char>(17 * x + 5 * y));
  }
  cv::Mat progressive = decode_png(p.encode());
  p.interlaced = true;
  cv::Mat interlaced = decode_png(p.encode());
  CHECK(cv::countNonZero(progressive != interlaced) == 0);
  CHECK(interlaced.at<uchar>(10, 12) == 17 * 12 + 5 * 10);
}

TEST_CASE("decode_png refuses what is not a whole PNG with invalid_raster", "[raster][png]") {
  CHECK(refusal("") == Code::invalid_raster);
  CHECK(refusal("this is not a PNG file at all") == Code::invalid_raster);
  CHECK(refusal(std::string("\x89PNG\r\n\x1a\n", 8)) == Code::invalid_raster);
  std::string whole = encode_png_gray(cv::Mat(64, 64, CV_8U, cv::Scalar(200)));
  CHECK(refusal(whole.substr(0, whole.size() / 2)) == Code::invalid_raster);
  CHECK(refusal(whole.substr(0, whole.size() - 12)) == Code::invalid_raster);  // no IEND
  std::string corrupt = whole;
  corrupt[45] ^= 0x55;  // inside the compressed data: CRC mismatch
  CHECK(refusal(corrupt) == Code::invalid_raster);
  try {
    decode_png("");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(std::string(e.what()).find("0 bytes") != std::string::npos);
  }
}

TEST_CASE("decode_png refuses oversized headers before allocating", "[raster][png]") {
  CHECK(refusal(header_only_png(100000, 100000)) == Code::invalid_raster);
  CHECK(refusal(header_only_png(2'000'000, 1)) == Code::invalid_raster);
  CHECK(png_size(header_only_png(300, 200)) == cv::Size(300, 200));
  std::string small = encode_png_gray(cv::Mat(100, 100, CV_8U, cv::Scalar(0)));
  CHECK(refusal(small, 5000) == Code::invalid_raster);
  CHECK(decode_png(small, 10000).size() == cv::Size(100, 100));
  try {
    decode_png(header_only_png(100000, 100000));
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("100000x100000") != std::string::npos);
  }
}

TEST_CASE("encode_png_gray and encode_png_rgb round-trip through decode_png", "[raster][png]") {
  cv::Mat gray(7, 9, CV_8U);
  cv::randu(gray, 0, 256);
  CHECK(cv::countNonZero(decode_png(encode_png_gray(gray)) != gray) == 0);
  cv::Mat bgr(2, 2, CV_8UC3);
  bgr.at<cv::Vec3b>(0, 0) = {0, 0, 255};  // red
  bgr.at<cv::Vec3b>(0, 1) = {0, 255, 0};  // green
  bgr.at<cv::Vec3b>(1, 0) = {255, 0, 0};  // blue
  bgr.at<cv::Vec3b>(1, 1) = {10, 20, 30};
  CHECK(pixels(decode_png(encode_png_rgb(bgr))) == std::vector<int>{76, 150, 29, 22});
  CHECK(encode_png_gray(gray) == encode_png_gray(gray.clone()));
  CHECK_THROWS_AS(encode_png_gray(bgr), Error);
}

TEST_CASE("ink is found on tinted, blotchy, noisy paper", "[raster][ink]") {
  const int n = 200;
  cv::Mat clean = test::Sketch(n, n).line({40, 100}, {160, 100}, 5).image();
  // Paper from 205 to 245 across the image with soft blotches, ink at 40, noise of +-4.
  cv::Mat gray(n, n, CV_8U);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> noise(-4, 4);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      double paper = 205 + 40.0 * x / n + 6 * std::sin(x / 13.0) * std::cos(y / 17.0);
      double coverage = (255 - clean.at<uchar>(y, x)) / 255.0;
      gray.at<uchar>(y, x) = cv::saturate_cast<uchar>(paper * (1 - coverage) + 40 * coverage + noise(rng));
    }
  Ink ink = separate_ink(gray);
  CHECK_FALSE(ink.uniform);
  CHECK(ink.paper_level > 205);
  CHECK(ink.paper_level < 245);
  // Ink exactly where the stroke is: 5 px wide, 120 + 5 px long.
  int inside = cv::countNonZero(ink.binary(cv::Rect(30, 95, 140, 11)));
  CHECK(inside == Approx(120 * 5 + kPi * 2.5 * 2.5).epsilon(0.03));
  CHECK(cv::countNonZero(ink.binary) == inside);
}

TEST_CASE("a uniform image has no ink or is one blob", "[raster][ink]") {
  Ink white = separate_ink(cv::Mat(20, 30, CV_8U, cv::Scalar(250)));
  CHECK(white.uniform);
  CHECK(cv::countNonZero(white.binary) == 0);
  Ink black = separate_ink(cv::Mat(20, 30, CV_8U, cv::Scalar(3)));
  CHECK(black.uniform);
  CHECK(cv::countNonZero(black.binary) == 600);
}

TEST_CASE("stroke width reads the drawn width", "[raster][width]") {
  for (double w : {4.0, 9.0}) {
    for (double angle : {0.0, 17.0, 45.0, 90.0}) {
      Vec2 c{100, 100}, d = from_angle(deg2rad(angle)) * 70;
      Ink ink = separate_ink(test::Sketch(200, 200).line(c - d, c + d, w).image());
      double measured = median_stroke_width(thin(ink.binary), ink.coverage);
      INFO("width " << w << " angle " << angle);
      CHECK(measured == Approx(w).margin(0.5));
    }
  }
  Ink ring = separate_ink(test::Sketch(200, 200).circle({100, 100}, 60, 6).image());
  CHECK(median_stroke_width(thin(ring.binary), ring.coverage) == Approx(6).margin(0.5));
}

TEST_CASE("thinning leaves a minimal 8-connected skeleton and keeps topology", "[raster][thin]") {
  Ink ink = separate_ink(test::Sketch(120, 120).line({10, 60}, {110, 60}, 7).circle({60, 60}, 35, 5).image());
  cv::Mat skel = thin(ink.binary);
  cv::Mat count = neighbour_count(skel);
  // Minimal: no pixel has two 4-neighbours that are diagonal to each other (a stair step).
  int steps = 0;
  for (int y = 1; y < skel.rows - 1; ++y)
    for (int x = 1; x < skel.cols - 1; ++x) {
      if (!skel.at<uchar>(y, x) || count.at<uchar>(y, x) != 2) continue;
      bool n = skel.at<uchar>(y - 1, x), s = skel.at<uchar>(y + 1, x), e = skel.at<uchar>(y, x + 1),
           w = skel.at<uchar>(y, x - 1);
      steps += (n && e) || (e && s) || (s && w) || (w && n);
    }
  CHECK(steps == 0);
  // Topology: one piece of skeleton; paper in three pieces (outside, two halves of the disc)
  // plus the skeleton's own label 0.
  cv::Mat labels;
  CHECK(cv::connectedComponents(skel, labels, 8) == 2);
  cv::Mat paper = skel == 0;
  CHECK(cv::connectedComponents(paper, labels, 4) == 4);
  // A 2x2 block and a two-pixel diagonal survive (parallel Zhang-Suen erases them).
  cv::Mat tiny = cv::Mat::zeros(14, 14, CV_8U);
  tiny(cv::Rect(1, 1, 2, 2)) = 1;
  for (int i = 0; i < 6; ++i) tiny.at<uchar>(5 + i, 5 + i) = tiny.at<uchar>(5 + i, 6 + i) = 1;
  CHECK(cv::countNonZero(thin(tiny)) >= 2);
  CHECK(cv::connectedComponents(thin(tiny), labels, 8) == 3);
}

TEST_CASE("specks are removed and pinholes filled", "[raster][clean]") {
  cv::Mat b = cv::Mat::zeros(50, 50, CV_8U);
  b(cv::Rect(5, 5, 30, 10)) = 1;
  b.at<uchar>(10, 10) = 0;  // pinhole
  b(cv::Rect(20, 8, 6, 4)) = 0;  // a real hole
  b.at<uchar>(40, 40) = 1;  // speck
  b(cv::Rect(40, 20, 3, 3)) = 1;  // a dot
  CHECK(remove_specks(b, 4) == 1);
  CHECK(b.at<uchar>(40, 40) == 0);
  CHECK(b.at<uchar>(21, 41) == 1);
  CHECK(fill_holes(b, 5) == 1);
  CHECK(b.at<uchar>(10, 10) == 1);
  CHECK(b.at<uchar>(10, 22) == 0);
}

// scale_onto stands in for cv::warpAffine in the views (raster/scale.hpp): the same pixels, to
// the bit, for scales up and down, fractional offsets, canvases past the image's edges.
TEST_CASE("scale_onto gives cv::warpAffine's pixels for a scale and an offset", "[raster][scale]") {
  cv::RNG rng(7);
  cv::Mat gray(53, 71, CV_8UC1);
  rng.fill(gray, cv::RNG::UNIFORM, 0, 256);
  cv::GaussianBlur(gray, gray, {5, 5}, 1.2);  // edges and flats, like a drawing
  cv::circle(gray, {30, 25}, 12, cv::Scalar(0), 2, cv::LINE_AA);
  int cases = 0, from_image = 0;
  for (double scale : {0.125, 0.3, 0.5, 0.77, 1.0, 1.5, 2.0, 3.37, 8.0}) {
    for (int k = 0; k < 8; ++k) {
      const cv::Point2d offset{rng.uniform(-40.0, 40.0), rng.uniform(-40.0, 40.0)};
      const cv::Point2d whole{std::round(offset.x), std::round(offset.y)};
      for (cv::Point2d o : {offset, whole}) {
        const cv::Size size(rng.uniform(1, 160), rng.uniform(1, 160));
        const cv::Mat m = (cv::Mat_<double>(2, 3) << scale, 0, o.x, 0, scale, o.y);
        for (auto [sampling, interpolation] : {std::pair{sv::Sampling::nearest, cv::INTER_NEAREST},
                                               std::pair{sv::Sampling::bilinear, cv::INTER_LINEAR}}) {
          cv::Mat want;
          cv::warpAffine(gray, want, m, size, interpolation, cv::BORDER_CONSTANT, 255);
          const cv::Mat got = sv::scale_onto(gray, scale, o, size, sampling, 255);
          INFO("scale " << scale << " offset " << o << " size " << size << " bilinear " << (interpolation == cv::INTER_LINEAR));
          REQUIRE(got.size() == want.size());
          CHECK(cv::countNonZero(got != want) == 0);
          from_image += cv::countNonZero(want != 255);
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 9 * 8 * 2 * 2);
  CHECK(from_image > 100000);  // most canvases show the image, not only the fill
  CHECK_THROWS_AS(sv::scale_onto(gray, 0, {0, 0}, {4, 4}, sv::Sampling::nearest, 255), sv::Error);
}
