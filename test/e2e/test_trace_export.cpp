// From an image to a robot file without a shell: TraceImage records what the pipeline records in
// a store, byte for byte; ExportDrawing writes what sv-simulate writes, byte for byte, and only
// inside the drawing's directory; hostile paths and images get the contract's codes.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <zlib.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "process.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kDrawing = "feather_shopping-cart_w5.png";

// A fresh directory holding the drawing as drawing.png and, with `init`, an empty store.
fs::path drawing_dir(const std::string& name, bool init = true) {
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::copy_file(data(kDrawing), d / "drawing.png");
  if (init) REQUIRE(run("cd " + d.string() + " && " + bin("sv-commit") + " init").status == 0);
  return d;
}

Run in(const fs::path& d, const std::string& cmd) { return run("cd " + d.string() + " && " + cmd); }

Run trace(const fs::path& d, const json& request) {
  return in(d, bin("sv-commit") + " trace-image --request '" + request.dump() + "'");
}

Run export_drawing(const fs::path& d, const json& request, const std::string& extra = "") {
  return in(d, bin("sv-simulate") + " export-drawing --rev HEAD " + extra + " --request '" + request.dump() + "'");
}

std::string head_scene(const fs::path& d) {
  Run r = in(d, bin("sv-commit") + " show HEAD");
  REQUIRE(r.status == 0);
  return r.out;
}

json log_of(const fs::path& d) {
  Run r = in(d, bin("sv-commit") + " log --json");
  REQUIRE(r.status == 0);
  return json::parse(r.out);
}

std::string be32(uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }
std::string chunk(const std::string& type, const std::string& body) {
  const std::string tb = type + body;
  return be32(body.size()) + tb + be32(crc32(0, reinterpret_cast<const Bytef*>(tb.data()), tb.size()));
}

}  // namespace

TEST_CASE("TraceImage records what sv-skeleton | sv-fit | sv-route | sv-simulate records", "[e2e][trace]") {
  struct Case {
    std::string cli_fit, cli_route;
    json request;
  };
  const std::vector<Case> cases = {
      {"", "", {{"image", "drawing.png"}}},
      {" --set fit.tolerance_px=1.5",
       " --footprint-mm 150 --robot plotter --start 0,0,90",
       {{"image", "drawing.png"}, {"set", {{"fit.tolerance_px", 1.5}}}, {"footprint_mm", 150}, {"robot", "plotter"},
        {"start", "0,0,90"}}},
  };
  int n = 0;
  for (const Case& c : cases) {
    CAPTURE(c.request.dump());
    const fs::path cli = drawing_dir(fmt::format("trace-cli-{}", n)), tool = drawing_dir(fmt::format("trace-tool-{}", n));
    ++n;
    Run p = in(cli, fmt::format("{} drawing.png | {}{} | {}{} | {} > /dev/null", bin("sv-skeleton"), bin("sv-fit"), c.cli_fit,
                                bin("sv-route"), c.cli_route, bin("sv-simulate")));
    INFO(p.err);
    REQUIRE(p.status == 0);
    Run t = trace(tool, c.request);
    INFO(t.err);
    REQUIRE(t.status == 0);
    const json env = json::parse(t.out);
    CHECK(env["ok"] == true);
    CHECK(env["tool"] == "TraceImage");
    CHECK(env["parent_revision_id"].is_null());  // the store was empty
    // The same scene bytes, hence the same id, and the same four revisions in the log.
    CHECK(head_scene(tool) == head_scene(cli));
    const json scene = json::parse(head_scene(tool));
    CHECK(env["revision_id"] == scene["revision"]["id"]);
    CHECK(env["stage_revision_ids"].size() == 4);
    CHECK(env["stage_revision_ids"][3] == env["revision_id"]);
    CHECK(env["primitive_count"] == scene["primitives"].size());
    CHECK(env["draw_time_s"].get<double>() > 0);
    CHECK(env["pen_up_moves"].is_number_integer());
    const json a = log_of(cli), b = log_of(tool);
    REQUIRE(a["revisions"].size() == b["revisions"].size());
    for (size_t i = 0; i < a["revisions"].size(); ++i) CHECK(a["revisions"][i]["revision_id"] == b["revisions"][i]["revision_id"]);
  }
}

TEST_CASE("TraceImage goes on top of HEAD by the store's rule and refuses what it cannot trace", "[e2e][trace]") {
  const fs::path d = drawing_dir("trace-rules");
  Run first = trace(d, {{"image", "drawing.png"}});
  REQUIRE(first.status == 0);
  const std::string head = json::parse(first.out)["revision_id"];
  // Again, with a note: a new chain whose first revision's HEAD was the last one's.
  Run again = trace(d, {{"image", fs::absolute(d / "drawing.png").string()}, {"note", "again"}, {"fast", true}});
  INFO(again.err);
  REQUIRE(again.status == 0);
  const json env = json::parse(again.out);
  CHECK(env["parent_revision_id"] == head);
  CHECK(json::parse(head_scene(d))["revision"]["note"] == "again");

  // Nothing recorded by a refusal: HEAD stays where it was.
  const std::string before = json::parse(head_scene(d))["revision"]["id"];
  auto refused = [&](const json& request, int status, const std::string& code) {
    Run r = trace(d, request);
    CAPTURE(request.dump(), r.err);
    CHECK(r.status == status);
    CHECK(r.err.find(code) != std::string::npos);
    CHECK(json::parse(r.out)["error"]["code"] == code);
    CHECK(json::parse(head_scene(d))["revision"]["id"] == before);
  };
  refused({{"image", "missing.png"}}, 4, "not_found");
  fs::create_directories(d / "folder.png");
  refused({{"image", "folder.png"}}, 3, "invalid_raster");
  REQUIRE(::mkfifo((d / "fifo.png").c_str(), 0600) == 0);
  refused({{"image", "fifo.png"}}, 3, "invalid_raster");  // refused, not waited on
  spit(d / "scene.png", head_scene(d));
  refused({{"image", "scene.png"}}, 3, "invalid_raster");
  // The header claims 100000 x 100000: refused before any allocation.
  spit(d / "huge.png", std::string("\x89PNG\r\n\x1a\n", 8) +
                           chunk("IHDR", be32(100000) + be32(100000) + std::string{8, 0, 0, 0, 0}) + chunk("IEND", ""));
  refused({{"image", "huge.png"}}, 3, "invalid_raster");
  refused({{"image", "drawing.png"}, {"set", {{"tolerance_px", 2}}}}, 2, "invalid_selection");
  refused({{"image", "drawing.png"}, {"set", {{"fit.no_such_key", 2}}}}, 2, "invalid_selection");
  refused({{"image", "drawing.png"}, {"start", "north"}}, 2, "invalid_selection");

  // No store: refused naming sv-commit init, and none is made.
  const fs::path bare = drawing_dir("trace-no-store", false);
  Run none = in(bare, "env -u SV_STORE " + bin("sv-commit") + " trace-image --image drawing.png");
  CHECK(none.status == 4);
  CHECK(none.err.find("sv-commit init") != std::string::npos);
  CHECK(!fs::exists(bare / ".svrev"));
}

TEST_CASE("ExportDrawing writes the bytes sv-simulate writes, to a file or inline", "[e2e][export]") {
  const fs::path d = drawing_dir("export-same");
  REQUIRE(trace(d, {{"image", "drawing.png"}}).status == 0);
  const json gcode_options = {{"gcode-units", "px"}, {"gcode-feed", 1200}, {"gcode-no-flip", true}};
  struct Format {
    std::string name, cli;
    json options;
  };
  const std::vector<Format> formats = {{"commands", "--commands", json::object()},
                                       {"gcode", "--gcode", json::object()},
                                       {"gcode", "--gcode --gcode-units px --gcode-feed 1200 --gcode-no-flip", gcode_options},
                                       {"svg", "--svg", json::object()},
                                       {"animation", "--animate", json::object()},
                                       {"view", "--png --color-by draw_order --show-ids", {{"color-by", "draw_order"}, {"show-ids", true}}}};
  const std::string head = json::parse(head_scene(d))["revision"]["id"];
  std::vector<std::string> tool_files, inline_bytes;
  int i = 0;
  for (const Format& f : formats) {
    CAPTURE(f.name, f.cli);
    const std::string file = fmt::format("out/tool-{}.{}", i++, f.name);
    fs::create_directories(d / "out");
    Run w = export_drawing(d, {{"format", f.name}, {"options", f.options}, {"path", file}});
    INFO(w.err);
    REQUIRE(w.status == 0);
    const json env = json::parse(w.out);
    CHECK(env["path"] == (d / file).string());
    CHECK(env["revision_id"] == head);
    tool_files.push_back(slurp(d / file));
    CHECK(env["bytes"] == tool_files.back().size());
    // Inline: the text in the envelope, the view as a picture.
    Run r = export_drawing(d, {{"format", f.name}, {"options", f.options}});
    REQUIRE(r.status == 0);
    const json inl = json::parse(r.out);
    CHECK(inl["path"].is_null());
    if (f.name == "view") {
      CHECK(inl["text"].is_null());
      inline_bytes.push_back(slurp(inl["images"]["view"].get<std::string>()));
    } else {
      inline_bytes.push_back(inl["text"]);
    }
  }
  // Still HEAD: an export records nothing.
  CHECK(json::parse(head_scene(d))["revision"]["id"] == head);
  for (size_t k = 0; k < formats.size(); ++k) {
    const Format& f = formats[k];
    CAPTURE(f.name, f.cli);
    const std::string cli_file = (d / fmt::format("cli-{}", k)).string();
    // The option naming the file first, its value options after it.
    const std::string flag = f.cli.substr(0, f.cli.find(' '));
    const std::string rest = f.cli.size() > flag.size() ? f.cli.substr(flag.size()) : "";
    // The revision through sv-simulate as a filter (run in the drawing's directory, where the
    // view's underlay is found by the source's path).
    Run c = in(d, fmt::format("{} show {} | {} --no-store {} {}{} -o /dev/null", bin("sv-commit"), head,
                              bin("sv-simulate"), flag, cli_file, rest));
    INFO(c.err);
    REQUIRE(c.status == 0);
    const std::string expected = slurp(cli_file);
    CHECK(!expected.empty());
    CHECK(tool_files[k] == expected);
    CHECK(inline_bytes[k] == expected);
  }
}

TEST_CASE("ExportDrawing writes only inside the drawing's directory", "[e2e][export]") {
  const fs::path d = drawing_dir("export-hostile");
  REQUIRE(trace(d, {{"image", "drawing.png"}}).status == 0);
  const fs::path outside = scratch() / "export-hostile-outside";
  fs::create_directories(outside);
  spit(outside / "target.gcode", "keep");
  fs::create_symlink(outside / "target.gcode", d / "link.gcode");
  fs::create_directory_symlink(outside, d / "linked");
  fs::create_directories(d / "folder.gcode");
  REQUIRE(::mkfifo((d / "fifo.gcode").c_str(), 0600) == 0);
  for (const std::string& path : {std::string("../escape.gcode"), std::string("a/../../escape.gcode"),
                                  (outside / "abs.gcode").string(), std::string("link.gcode"),
                                  std::string("linked/target.gcode"), std::string("folder.gcode"),
                                  std::string("fifo.gcode"), std::string(".svrev/objects/x"), std::string("."),
                                  std::string("")}) {
    CAPTURE(path);
    Run r = export_drawing(d, {{"format", "gcode"}, {"path", path}});
    CHECK(r.status == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(json::parse(r.out)["error"]["code"] == "invalid_selection");
  }
  CHECK(slurp(outside / "target.gcode") == "keep");
  CHECK(fs::is_symlink(d / "link.gcode"));
  CHECK(!fs::exists(scratch() / "escape.gcode"));
  CHECK(!fs::exists(outside / "abs.gcode"));
  // A missing folder is not made; an absolute path inside the directory is taken.
  CHECK(export_drawing(d, {{"format", "gcode"}, {"path", "no/such/folder.gcode"}}).status == 4);
  Run abs = export_drawing(d, {{"format", "svg"}, {"path", (d / "inside.svg").string()}});
  CHECK(abs.status == 0);
  CHECK(fs::is_regular_file(d / "inside.svg"));
  // An existing regular file is replaced whole.
  spit(d / "old.gcode", "old");
  REQUIRE(export_drawing(d, {{"format", "gcode"}, {"path", "old.gcode"}}).status == 0);
  CHECK(slurp(d / "old.gcode").find("G21") != std::string::npos);
  // Options are the backend's own, checked as sv-simulate checks them.
  CHECK(export_drawing(d, {{"format", "gcode"}, {"options", {{"color-by", "order"}}}}).status == 2);
  CHECK(export_drawing(d, {{"format", "gcode"}, {"options", {{"gcode-feed", -1}}}}).status == 2);
  CHECK(export_drawing(d, {{"format", "gcode"}, {"options", {{"gcode-units", "furlongs"}}}}).status == 2);
  CHECK(export_drawing(d, {{"format", "view"}, {"options", {{"show-ids", "yes"}}}}).status == 2);
}

TEST_CASE("sv-mcp: TraceImage into an empty store, then ExportDrawing's text as one embedded resource", "[e2e][export][mcp]") {
  const fs::path d = drawing_dir("export-mcp");
  auto call = [](int id, const std::string& name, const json& args) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", name}, {"arguments", args}}}}
        .dump();
  };
  spit(d / "session.ndjson",
       json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"protocolVersion", "2025-11-25"}}}}.dump() +
           "\n" + call(2, "TraceImage", {{"image", "drawing.png"}}) + "\n" + call(3, "ExportDrawing", {{"format", "gcode"}}) +
           "\n" + call(4, "ExportDrawing", {{"format", "svg"}, {"path", "drawing.svg"}}) + "\n");
  Run r = in(d, bin("sv-mcp") + " < session.ndjson");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const std::vector<json> replies = json_lines(r.out);
  REQUIRE(replies.size() == 4);
  const json traced = replies[1]["result"];
  REQUIRE(traced["isError"] == false);
  const std::string head = traced["structuredContent"]["revision_id"];
  CHECK(json::parse(head_scene(d))["revision"]["id"] == head);

  const json inl = replies[2]["result"];
  REQUIRE(inl["isError"] == false);
  CHECK(!inl["structuredContent"].contains("text"));
  REQUIRE(inl["content"].size() == 2);
  const json& resource = inl["content"][1];
  CHECK(resource["type"] == "resource");
  CHECK(resource["resource"]["uri"] == "sv://revision/" + head + "/gcode");
  CHECK(resource["resource"]["mimeType"] == "text/plain");
  Run cli = in(d, bin("sv-commit") + " show HEAD | " + bin("sv-simulate") +
                      " --no-store --gcode cli.gcode --svg cli.svg -o /dev/null");
  REQUIRE(cli.status == 0);
  CHECK(resource["resource"]["text"] == slurp(d / "cli.gcode"));
  CHECK(inl["structuredContent"]["sha256"].get<std::string>().size() == 64);

  const json file = replies[3]["result"];
  REQUIRE(file["isError"] == false);
  CHECK(file["content"].size() == 1);
  CHECK(slurp(d / "drawing.svg") == slurp(d / "cli.svg"));
}
