// Bad input gets one line on stderr and the contract's exit status, never a crash or a
// partial document.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <random>

#include "../unit/image_files.hpp"
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
  for (auto [ext, whole] : {std::pair{".jpg", sv::test::encode_jpeg(gray)}, std::pair{".tiff", sv::test::encode_tiff(gray)},
                            std::pair{".bmp", sv::test::encode_bmp(gray)}, std::pair{".webp", sv::test::encode_webp(gray)}}) {
    INFO(ext);
    // The codec libraries must not print their own complaints on stderr; only sv's line may show.
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

// Hostile scenes and requests: each is refused with the contract's error, quickly and in little
// memory, before the work it would otherwise cost (deep recursion, quadratic copies, regex
// recursion on a long id).
namespace {

// A valid fitted scene of n separate lines p_0001…, with `extra` spliced in as further
// top-level members (",\"key\":value…").
std::string grid_scene(int n, const std::string& extra = "") {
  std::string out = R"({"format":"sv.scene","version":1,"primitives":[)";
  for (int i = 0; i < n; ++i) {
    int x = 20 * (i % 100) + 5, y = 20 * (i / 100) + 5;
    char buf[200];
    std::snprintf(buf, sizeof buf, R"(%s{"id":"p_%04d","type":"line","p0":[%d,%d],"p1":[%d,%d]})", i ? "," : "", i + 1,
                  x, y, x + 10, y);
    out += buf;
  }
  return out + "]" + extra + "}";
}

std::string nested(const std::string& open, const std::string& leaf, const std::string& close, int depth) {
  std::string out;
  out.reserve(depth * (open.size() + close.size()) + leaf.size());
  for (int i = 0; i < depth; ++i) out += open;
  out += leaf;
  for (int i = 0; i < depth; ++i) out += close;
  return out;
}

// Runs `cmd` (through sh) and checks the refusal: status, one line on stderr naming the code,
// nothing on stdout, within a few seconds (a loaded machine; the defects took from 5 s to
// minutes) and, where GNU time is at hand, under 100 MB (300 MB under the sanitizers).
void refused_quickly(const std::string& cmd, int status, const std::string& code, const std::string& says = "") {
  INFO(cmd.substr(0, 200));
  const bool timed = std::filesystem::exists("/usr/bin/time");
  auto mem = scratch() / "peak_kb";
  std::filesystem::remove(mem);
  auto t0 = std::chrono::steady_clock::now();
  std::string quoted;
  for (char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  Run r = run(timed ? "/usr/bin/time -f %M -o " + mem.string() + " sh -c '" + quoted + "'" : cmd);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.err.substr(0, 300));
  refused(r, status, code);
  if (!says.empty()) CHECK(r.err.find(says) != std::string::npos);
  CHECK(seconds < 5);
  if (timed) {  // GNU time writes "Command exited with non-zero status N" first, then %M
    std::string t = slurp(mem);
    while (!t.empty() && t.back() == '\n') t.pop_back();
    // Under AddressSanitizer shadow memory and the quarantine add their own share.
    CHECK(std::stol(t.substr(t.find_last_of('\n') + 1)) < (kSanitized ? 300 : 100) * 1024);
  }
}

std::string scene_file(const std::string& name, const std::string& text) {
  auto p = scratch() / name;
  spit(p, text);
  return p.string();
}

}  // namespace

TEST_CASE("deep nesting is refused while parsing, before anything is built", "[e2e][bad-input][hostile]") {
  // Nested objects in metrics cost quadratic copies; nested arrays under an unknown key
  // overflowed the stack when written back.
  std::string metrics = scene_file("deep-metrics.json", grid_scene(1, ",\"metrics\":" + nested("{\"a\":", "1", "}", 50000)));
  refused_quickly(bin("sv-route") + " --no-store " + metrics, 3, "invalid_scene", "nested deeper than 64 levels");
  std::string arrays = scene_file("deep-arrays.json", grid_scene(1, ",\"zzz\":" + nested("[", "", "]", 100000)));
  refused_quickly(bin("sv-route") + " --no-store " + arrays, 3, "invalid_scene", "nested deeper than 64 levels");
  refused_quickly(bin("sv-diagnose") + " list-primitives --no-store " + arrays, 3, "invalid_scene");
  // A request nested as deeply: refused as a bad request.
  std::string ok = scene_file("one.json", grid_scene(1));
  spit(scratch() / "deep-request.json", "{\"primitive_ids\":" + nested("[", "", "]", 100000) + "}");
  refused_quickly(bin("sv-edit") + " delete-primitive --no-store --request-file " + (scratch() / "deep-request.json").string() +
                      " " + ok,
                  2, "invalid_selection", "nested deeper than 64 levels");
  // Sixty levels are fine: an unknown key is kept as it was.
  Run fine = run(bin("sv-route") + " --no-store " + scene_file("sixty.json", grid_scene(1, ",\"zzz\":" + nested("[", "", "]", 60))));
  CHECK(fine.status == 0);
  CHECK(fine.out.find(nested("[", "", "]", 60)) != std::string::npos);
}

TEST_CASE("a long id is refused by its length, in scenes and in requests", "[e2e][bad-input][hostile]") {
  const std::string long_id = "p_" + std::string(40000, '1');
  std::string scene = grid_scene(1);
  std::string bad = scene;
  bad.replace(bad.find("p_0001"), 6, long_id);
  refused_quickly(bin("sv-route") + " --no-store " + scene_file("long-id.json", bad), 3, "invalid_scene",
                  "an id of more than 64 characters");
  std::string ok = scene_file("one.json", scene);
  refused_quickly(bin("sv-edit") + " delete-primitive --no-store --request '{\"primitive_ids\":[\"" + long_id + "\"]}' " + ok, 2,
                  "invalid_selection", "an id of more than 64 characters");
}

TEST_CASE("ids must be unique and name what the scene has", "[e2e][bad-input][hostile]") {
  std::string dup = grid_scene(2);
  dup.replace(dup.find("p_0002"), 6, "p_0001");
  refused_quickly(bin("sv-route") + " --no-store " + scene_file("dup.json", dup), 3, "invalid_scene",
                  "primitive id p_0001 is used more than once");
  refused_quickly(bin("sv-simulate") + " --no-store " +
                      scene_file("tour.json", grid_scene(1, R"(,"tour":[{"primitive":"p_0009","direction":"forward"}])")),
                  3, "invalid_scene", "names primitive p_0009");
  std::string graph =
      R"({"format":"sv.scene","version":1,"graph":{"vertices":[{"id":"v_0001","x":1,"y":1,"degree":1,"kind":"end"}],)"
      R"("edges":[{"id":"e_0001","v0":"v_0001","v1":"v_0007","points":[[1,1],[5,1]],"closed":false}]}})";
  refused_quickly(bin("sv-fit") + " --no-store " + scene_file("graph.json", graph), 3, "invalid_scene", "names vertex v_0007");
}

TEST_CASE("a 100,000-primitive scene is within the limits, and read whole", "[e2e][bad-input][hostile]") {
  // The size the limits are made generous for (the tools once searched the primitives linearly
  // per primitive, and the reader rescanned the array at every object). scripts/bench measures
  // how the time grows.
  Run r = run(bin("sv-diagnose") + " list-primitives --no-store --limit 2 " + scene_file("grid100k.json", grid_scene(100000)));
  CHECK(r.status == 0);
  CHECK(r.out.find("2 of 100000 primitives") != std::string::npos);
}

TEST_CASE("sv-route: each --set takes one value", "[e2e][bad-input]") {
  std::string scene = scene_file("grid3.json", grid_scene(3));
  // The file after --set KEY=VALUE is the input, not a second setting (stdin is empty here).
  Run r = run(bin("sv-route") + " --no-store --set route.deviation_px=0 " + scene + " < /dev/null");
  CHECK(r.status == 0);
  CHECK(r.out.find("\"commands\"") != std::string::npos);
  Run two = run(bin("sv-route") + " --no-store --set route.deviation_px=0 --set route.deviation_px=0.5 " + scene + " < /dev/null");
  CHECK(two.status == 0);
}

TEST_CASE("filter-mode tools leave stdout empty on failure", "[e2e][bad-input]") {
  std::string bad = scene_file("dup2.json", [] {
    std::string s = grid_scene(2);
    return s.replace(s.find("p_0002"), 6, "p_0001");
  }());
  refused(run(bin("sv-diagnose") + " list-primitives --no-store < " + bad), 3, "invalid_scene");
  refused(run(bin("sv-edit") + " delete-primitive --no-store --primitive-ids p_0001 < " + bad), 3, "invalid_scene");
  std::string ok = scene_file("grid2.json", grid_scene(2));
  refused(run(bin("sv-diagnose") + " get-primitive --no-store --id p_0404 " + ok), 4, "not_found");
  // An integer beyond what a double holds exactly is out of range, not negative.
  Run big = run(bin("sv-diagnose") + " list-primitives --no-store --limit 99999999999999999999 " + ok);
  refused(big, 2, "invalid_selection");
  CHECK(big.err.find("out of range") != std::string::npos);
}

TEST_CASE("rerun-stage without a region runs on the whole drawing", "[e2e][bad-input]") {
  // The missing "region" was read from a const request with operator[] (undefined behaviour).
  auto routed = scratch() / "rerun-routed.json";
  REQUIRE(run(bin("sv-skeleton") + " --no-store " + data("feather_umbrella_w8.png") + " | " + bin("sv-fit") + " --no-store | " +
              bin("sv-route") + " --no-store > " + routed.string())
              .status == 0);
  Run r = run(bin("sv-edit") + " rerun-stage --stage route_optimize --no-store " + routed.string());
  CHECK(r.status == 0);
  CHECK(r.out.find("\"format\":\"sv.scene\"") != std::string::npos);
  // Without a store or a readable source there is nothing to re-trace: refused, in one line.
  std::string scene = scene_file("grid4.json", grid_scene(4));
  Run sk = run(bin("sv-edit") + " rerun-stage --stage skeletonize --no-store " + scene);
  refused(sk, 1, "no_result");
}

TEST_CASE("sv-commit status refuses a HEAD pointing outside refs/heads", "[e2e][bad-input]") {
  auto dir = scratch() / "tampered-head";
  std::filesystem::create_directories(dir);
  REQUIRE(run("cd " + dir.string() + " && " + bin("sv-commit") + " init").status == 0);
  spit(dir / ".svrev" / "HEAD", "ref: refs/heads/../../../../etc/passwd\n");
  Run r = run("cd " + dir.string() + " && " + bin("sv-commit") + " status");
  refused(r, 3, "corrupt_object");
}

TEST_CASE("a 1x1 dark image gives one warning", "[e2e][bad-input]") {
  auto p = scratch() / "dot1.png";
  spit(p, gray_png(1, 1, 0));
  Run r = run(bin("sv-skeleton") + " --no-store " + p.string());
  CHECK(r.status == 0);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find("uniformly dark and too small to trace") != std::string::npos);
}

TEST_CASE("a stage's --set refuses unknown keys and values outside their limits, naming the key and the limits",
          "[e2e][bad-input][params]") {
  std::string scene = scene_file("grid3_set.json", grid_scene(3));
  Run unknown = run(bin("sv-route") + " --no-store --set route.bogus=1 " + scene);
  refused(unknown, 2, "invalid_selection");
  CHECK(unknown.err.find("route.bogus") != std::string::npos);
  Run low = run(bin("sv-route") + " --no-store --set route.snap_px=0 " + scene);
  refused(low, 2, "invalid_selection");
  CHECK(low.err.find("route.snap_px") != std::string::npos);
  CHECK(low.err.find("it must be at least 1e-06 px") != std::string::npos);
  Run fraction = run(bin("sv-route") + " --no-store --set route.max_passes=2.5 " + scene);
  refused(fraction, 2, "invalid_selection");
  CHECK(fraction.err.find("route.max_passes") != std::string::npos);
  Run skeleton = run(bin("sv-skeleton") + " --no-store --set skeleton.threshold=300 " + data("feather_umbrella_w8.png"));
  refused(skeleton, 2, "invalid_selection");
  CHECK(skeleton.err.find("it must be between 0 and 255 gray level") != std::string::npos);
}

// Hostile images: each is refused in one line, quickly and in little memory, before the work it
// would otherwise cost. Generated here from fixed patterns; none is a committed file.
namespace {

// A w x h 8-bit gray PNG whose row y is row(y), deflated as it is made (a 100-megapixel image
// never exists whole).
std::string streamed_png(uint32_t w, uint32_t h, const std::function<std::string(uint32_t)>& row) {
  z_stream z{};
  REQUIRE(deflateInit(&z, 1) == Z_OK);
  std::string idat, out(1 << 16, '\0');
  for (uint32_t y = 0; y <= h; ++y) {
    std::string raw = y < h ? '\0' + row(y) : std::string();
    z.next_in = reinterpret_cast<Bytef*>(raw.data());
    z.avail_in = static_cast<uInt>(raw.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, y < h ? Z_NO_FLUSH : Z_FINISH);
      idat.append(out.data(), out.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return std::string("\x89PNG\r\n\x1a\n", 8) + ihdr(w, h) + chunk("IDAT", idat) + chunk("IEND", "");
}

// Lines 2 px wide every 16 px both ways: the issue's grid, whose cost is its content.
std::string grid_png(uint32_t n) {
  std::string line(n, '\0'), cross(n, '\xFF');
  for (uint32_t x = 0; x < n; x += 16) cross[x] = cross[x + 1 < n ? x + 1 : x] = '\0';
  return streamed_png(n, n, [&](uint32_t y) { return y % 16 < 2 ? line : cross; });
}

std::string image_file(const std::string& name, const std::string& bytes) {
  auto p = scratch() / name;
  spit(p, bytes);
  return p.string();
}

}  // namespace

TEST_CASE("corrupt JPEGs are refused, not traced", "[e2e][bad-input][hostile]") {
  cv::Mat gray = sv::decode_png(slurp(data("feather_umbrella_w8.png")));
  const std::string whole = sv::test::encode_jpeg(gray, {90});
  REQUIRE(run(bin("sv-skeleton") + " --no-store " + image_file("whole.jpg", whole)).status == 0);
  // Cut in half with the end marker put back: libjpeg fills the rest with gray, with a warning.
  Run cut = run(bin("sv-skeleton") + " --no-store " + image_file("cut.jpg", whole.substr(0, whole.size() / 2) + "\xFF\xD9"));
  refused(cut, 3, "invalid_raster");
  CHECK(cut.err.find("not a readable JPEG") != std::string::npos);
  // Garbage in the scan (no marker in it).
  std::string garbled = whole;
  std::mt19937 rng(3);
  for (size_t i = whole.size() / 3; i < whole.size() / 3 + 200; ++i) garbled[i] = static_cast<char>(rng() % 255);
  refused(run(bin("sv-skeleton") + " --no-store " + image_file("garbled.jpg", garbled)), 3, "invalid_raster");
}

TEST_CASE("hostile image headers are refused quickly and in little memory", "[e2e][bad-input][hostile]") {
  auto le = [](uint32_t v, int n) { return sv::test::le_bytes(v, n); };
  // A 16x16 TIFF in one 12288x12288 tile (OpenCV's reader filled 576 MiB for it).
  std::string tiff = std::string("II*\0", 4) + le(8, 4) + le(8, 2);
  for (auto [tag, value] : std::initializer_list<std::pair<uint32_t, uint32_t>>{
           {256, 16}, {257, 16}, {258, 8}, {262, 1}, {322, 12288}, {323, 12288}, {324, 8}, {325, 4}})
    tiff += le(tag, 2) + le(4, 2) + le(1, 4) + le(value, 4);
  refused_quickly(bin("sv-skeleton") + " --no-store " + image_file("tiles.tif", tiff + le(0, 4)), 3, "invalid_raster",
                  "tiles of 12288x12288 pixels");
  // A 2 KB JPEG whose header claims 49 megapixels (within the budget): nothing behind it.
  std::string jpeg = sv::test::encode_jpeg(cv::Mat(8, 8, CV_8U, cv::Scalar(0)));
  const size_t sof = jpeg.find("\xFF\xC0");
  jpeg.replace(sof + 5, 4, std::string("\x1B\x58\x1B\x58", 4));  // 7000 x 7000
  refused_quickly(bin("sv-skeleton") + " --no-store " + image_file("claims.jpg", jpeg.substr(0, jpeg.size() - 40)), 3,
                  "invalid_raster", "remature end");
  // A 100-megapixel PNG of 130 KB (the grid of the next test): beyond the pixel budget.
  refused_quickly(bin("sv-skeleton") + " --no-store " + image_file("grid100.png", grid_png(10000)), 3, "invalid_raster",
                  "10000x10000 pixels, more than the limit of 50000000");
}

TEST_CASE("a drawing whose skeleton is beyond the budget is refused before its graph is built", "[e2e][bad-input][hostile]") {
  // 1200x1200 of the grid: 27.5k junction pixels, beyond the budget (2000x2000's 77k took the
  // stroke graph 14.7 s and 761 MB); small enough to be refused within 100 MB when sanitized too.
  // scripts/bench times the largest accepted image and the 100-megapixel grid.
  refused_quickly(bin("sv-skeleton") + " --no-store " + image_file("grid1200.png", grid_png(1200)), 3, "invalid_raster",
                  "junction pixels, more than the limit of 20000");
  // 500x500 of it (4.7k junction pixels) is traced.
  Run small = run(bin("sv-skeleton") + " --no-store " + image_file("grid500.png", grid_png(500)));
  CHECK(small.status == 0);
}
