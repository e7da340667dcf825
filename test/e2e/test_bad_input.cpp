// Bad input gets one line on stderr and the contract's exit status, never a crash or a
// partial document.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <opencv2/imgcodecs.hpp>

#include "process.hpp"
#include "raster/png.hpp"

using namespace svtest;

namespace {

std::string chunk(const std::string& type, const std::string& body) {
  auto be32 = [](uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  };
  std::string tb = type + body;
  uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(tb.data()), tb.size());
  return be32(body.size()) + tb + be32(crc);
}

std::string ihdr(uint32_t w, uint32_t h) {
  auto be32 = [](uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  };
  return chunk("IHDR", be32(w) + be32(h) + std::string{8, 0, 0, 0, 0});
}

// A w x h 8-bit gray PNG filled with `level`.
std::string gray_png(uint32_t w, uint32_t h, unsigned char level) {
  std::string raw;
  for (uint32_t y = 0; y < h; ++y) raw += '\0' + std::string(w, char(level));
  uLongf n = compressBound(raw.size());
  std::string z(n, '\0');
  compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(raw.data()), raw.size());
  z.resize(n);
  return std::string("\x89PNG\r\n\x1a\n", 8) + ihdr(w, h) + chunk("IDAT", z) + chunk("IEND", "");
}

Run skeleton_of_bytes(const std::string& name, const std::string& bytes) {
  auto p = scratch() / name;
  spit(p, bytes);
  return run(bin("sv-skeleton") + " --no-store " + p.string());
}

Run fit_of_text(const std::string& name, const std::string& text) {
  auto p = scratch() / name;
  spit(p, text);
  return run(bin("sv-fit") + " --no-store < " + p.string());
}

void refused(const Run& r, int status, const std::string& code) {
  CHECK(r.status == status);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find(code) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("sv-skeleton refuses unreadable images with invalid_raster", "[e2e][bad-input]") {
  refused(skeleton_of_bytes("empty.png", ""), 3, "invalid_raster");
  refused(skeleton_of_bytes("text.png", "this is not an image\n"), 3, "invalid_raster");
  std::string good = slurp(data("feather_umbrella_w8.png"));
  refused(skeleton_of_bytes("truncated.png", good.substr(0, good.size() / 2)), 3, "invalid_raster");
  // The header claims 100000 x 100000: refused before any allocation.
  std::string huge = std::string("\x89PNG\r\n\x1a\n", 8) + ihdr(100000, 100000) + chunk("IEND", "");
  refused(skeleton_of_bytes("huge.png", huge), 3, "invalid_raster");
  refused(run(bin("sv-skeleton") + " --no-store /nonexistent/drawing.png"), 3, "io_error");
}

TEST_CASE("sv-skeleton refuses damaged JPEG, TIFF, BMP and WebP in one line", "[e2e][bad-input][image]") {
  cv::Mat gray = sv::decode_png(slurp(data("feather_umbrella_w8.png")));
  for (const char* ext : {".jpg", ".tiff", ".bmp", ".webp"}) {
    INFO(ext);
    std::vector<uchar> b;
    REQUIRE(cv::imencode(ext, gray, b));
    std::string whole(b.begin(), b.end());
    // OpenCV's decoders would print their own complaints on stderr; only sv's line may show.
    for (size_t keep : {whole.size() / 2, whole.size() - 8}) {
      INFO(keep);
      refused(skeleton_of_bytes(std::string("truncated") + ext, whole.substr(0, keep)), 3, "invalid_raster");
    }
  }
  // A JPEG frame header claiming 65535 x 65535 and nothing else: refused by its size.
  std::string sof = std::string("\xFF\xD8\xFF\xC0\x00\x11\x08\xFF\xFF\xFF\xFF\x03", 12) + std::string(9, '\x01');
  Run huge = skeleton_of_bytes("huge.jpg", sof);
  refused(huge, 3, "invalid_raster");
  CHECK(huge.err.find("65535x65535") != std::string::npos);
  Run gif = skeleton_of_bytes("drawing.gif", "GIF89a...");
  refused(gif, 3, "invalid_raster");
  CHECK(gif.err.find("PNG, JPEG, TIFF, BMP or WebP") != std::string::npos);
}

TEST_CASE("degenerate images give valid scenes", "[e2e][bad-input]") {
  for (auto [name, w, h, level] : {std::tuple{"white.png", 64u, 64u, 255}, std::tuple{"one.png", 1u, 1u, 0},
                                   std::tuple{"black.png", 64u, 64u, 0}}) {
    INFO(name);
    auto p = scratch() / name;
    spit(p, gray_png(w, h, static_cast<unsigned char>(level)));
    Run r = run(bin("sv-skeleton") + " --no-store " + p.string() + " | " + bin("sv-fit") + " --no-store | " +
                bin("sv-route") + " --no-store | " + bin("sv-simulate") + " --no-store");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"format\":\"sv.scene\"") != std::string::npos);
  }
  auto p = scratch() / "white.png";
  Run r = run(bin("sv-skeleton") + " --no-store " + p.string());
  CHECK(r.err.find("warning") != std::string::npos);
  CHECK(r.out.find("\"edges\":[]") != std::string::npos);
}

TEST_CASE("readers refuse malformed, future and non-finite scenes", "[e2e][bad-input]") {
  refused(fit_of_text("malformed.json", "{\"format\": \"sv.scene\", \"version\": 1, \"graph\": {"), 3, "invalid_scene");
  refused(fit_of_text("empty.json", ""), 3, "invalid_scene");
  refused(fit_of_text("v99.json", "{\"format\":\"sv.scene\",\"version\":99}"), 3, "unsupported_version");
  refused(fit_of_text("nan.json",
                      R"({"format":"sv.scene","version":1,"graph":{"vertices":[],"edges":[{"id":"e_0001","v0":"v_0001","v1":"v_0001","points":[[NaN,1]],"closed":false}]}})"),
          3, "invalid_scene");
  refused(fit_of_text("null.json",
                      R"({"format":"sv.scene","version":1,"graph":{"vertices":[],"edges":[{"id":"e_0001","v0":"v_0001","v1":"v_0001","points":[[null,1]],"closed":false}]}})"),
          3, "invalid_scene");
  refused(fit_of_text("far.json",
                      R"({"format":"sv.scene","version":1,"graph":{"vertices":[],"edges":[{"id":"e_0001","v0":"v_0001","v1":"v_0001","points":[[1e300,1]],"closed":false}]}})"),
          3, "invalid_scene");
  Run usage = run(bin("sv-fit") + " --no-such-option");
  CHECK(usage.status == 2);
  CHECK(count_lines(usage.err) == 1);
}
