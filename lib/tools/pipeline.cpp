// From an image to a robot file without a shell: TraceImage runs the four stages on an image into
// the store, ExportDrawing writes a revision out as the robot's or a plotter's file. Both work
// where the drawing is: the store's parent directory (the drawing's directory) anchors relative
// paths, and an export never leaves it. Each tool's registry entry stands right after its handler.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/cancel.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "core/messages.hpp"
#include "core/scene_check.hpp"
#include "export/export.hpp"
#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "raster/image.hpp"
#include "raster/png.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "store/store.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

// The directory the drawing lives in: the store's parent ("." for a store named relative to it).
fs::path drawing_dir(const Store& store) {
  const fs::path dir = store.root().parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// ---------------------------------------------------------------- TraceImage

struct TraceRequest : NoteRequest {
  std::string image;
  json set;  // --set key -> number, each going to the stage its prefix names
  bool fast;
  std::optional<double> footprint_mm;
  std::optional<std::string> robot, start;
};

// One stage's result as a filter in a store makes it: the revision fields the stage records, the
// id, and the scene the next stage reads — parsed back from the text the stage writes, so every
// number is the serialized one, as in a pipe.
struct StageRun {
  Scene scene;
  std::string text;
};

StageRun seal(Scene out, const std::string& parent, const std::string& tool, json args, const std::string& note) {
  out.revision = RevisionInfo{};
  out.revision.parent = parent;
  out.revision.tool = tool;
  out.revision.args = std::move(args);
  out.revision.note = note;
  StageRun r;
  r.text = sealed_scene_text(out);
  r.scene = std::move(out);
  return r;
}

Scene next_input(const StageRun& r) {
  Scene s = parse_scene(r.text);
  s.warnings.clear();
  return s;
}

// The request's --set keys split by stage, with the arguments each stage would record for them.
struct StageSettings {
  std::map<std::string, double> values;
  json args = json::array();
};

std::map<std::string, StageSettings> split_settings(const json& set) {
  std::map<std::string, StageSettings> out;
  for (auto it = set.begin(); it != set.end(); ++it) {
    const std::string& key = it.key();
    std::string stage;
    for (const auto& [prefix, s] : {std::pair{"skeleton.", "sv-skeleton"}, {"graph.", "sv-skeleton"},
                                    {"fit.", "sv-fit"}, {"route.", "sv-route"}})
      if (key.rfind(prefix, 0) == 0) stage = s;
    if (stage.empty())
      throw Error(Code::invalid_selection,
                  fmt::format("set: '{}' names no stage: keys begin with skeleton., graph., fit. or route.", key),
                  {{"key", key}});
    if (!it.value().is_number())
      throw Error(Code::invalid_selection, fmt::format("set: {} must be a number", key), {{"key", key}});
    const double v = it.value().get<double>();
    out[stage].values[key] = v;
    out[stage].args.push_back("--set");
    out[stage].args.push_back(key + "=" + number_text(v));
  }
  return out;
}

ToolResult trace_image(const ToolContext& ctx, const TraceRequest& req) {
  Store& store = *ctx.store;
  const std::string head_seen = store.head_id();
  if (req.image.empty()) throw Error(Code::invalid_selection, "image: give the path of a drawing");
  fs::path file(req.image);
  if (file.is_relative()) file = drawing_dir(store) / file;
  const std::string bytes = read_regular_file(file.string(), kMaxImageFileBytes, Code::invalid_raster);
  refuse_known_non_image(bytes, req.image);
  auto settings = split_settings(req.set);

  // Between stages a cancelled call stops (sv-mcp), before anything is recorded.
  auto next_stage = [](int done, const char* stage) {
    stop_if_cancelled();
    report_progress(done, 4, stage);
  };
  // sv-skeleton IMAGE: the path as given, as the stage records it.
  next_stage(0, "sv-skeleton");
  const cv::Mat gray = decode_image(bytes);
  Scene traced;
  traced.source = Source{req.image, sha256_hex(bytes), gray.cols, gray.rows, 0};
  skeletonize(traced, gray, SkeletonOptions{settings["sv-skeleton"].values});
  std::vector<StageRun> runs;
  runs.push_back(seal(std::move(traced), "", "sv-skeleton", settings["sv-skeleton"].args, ""));

  // sv-fit [--fast]
  next_stage(1, "sv-fit");
  Scene fitted = next_input(runs.back());
  FitOptions fo{req.fast ? fast_overrides() : std::map<std::string, double>{}};
  for (const auto& [k, v] : settings["sv-fit"].values) fo.overrides[k] = v;
  drop_downstream_of_fit(fitted);
  fit(fitted, fo);
  json fit_args = req.fast ? json::array({"--fast"}) : json::array();
  for (const auto& a : settings["sv-fit"].args) fit_args.push_back(a);
  runs.push_back(seal(std::move(fitted), runs.back().scene.revision.id, "sv-fit", fit_args, ""));

  // sv-route [--footprint-mm MM] [--robot MODEL] [--start POSE]
  next_stage(2, "sv-route");
  Scene routed = next_input(runs.back());
  RouteOptions ro;
  json route_args = json::array();
  if (req.footprint_mm) {
    ro.footprint_mm = *req.footprint_mm;
    route_args.push_back("--footprint-mm");
    route_args.push_back(number_text(*req.footprint_mm));
  }
  if (req.robot) {
    ro.model = *req.robot;
    route_args.push_back("--robot");
    route_args.push_back(*req.robot);
  }
  if (req.start) {
    ro.start = parse_start(*req.start);
    route_args.push_back("--start");
    route_args.push_back(*req.start);
  }
  ro.overrides = settings["sv-route"].values;
  for (const auto& a : settings["sv-route"].args) route_args.push_back(a);
  drop_downstream_of_route(routed);
  route(routed, ro);
  runs.push_back(seal(std::move(routed), runs.back().scene.revision.id, "sv-route", route_args, ""));

  // sv-simulate [--note NOTE]
  next_stage(3, "sv-simulate");
  Scene simulated = next_input(runs.back());
  drop_downstream_of_route(simulated);
  simulate(simulated, SimulateOptions{});
  const std::string note = req.note.value_or("");
  runs.push_back(seal(std::move(simulated), runs.back().scene.revision.id, "sv-simulate", json::array(), note));

  stop_if_cancelled();
  // All four computed: now recorded one after the other, each from the one before, as the
  // pipeline records them; HEAD moves only from what it named when the call began.
  ToolResult r;
  store.put_blob(bytes);
  std::string expected = head_seen;
  json ids = json::array();
  for (StageRun& run : runs) {
    const RevisionInfo& rev = run.scene.revision;
    expected = store.record(run.scene, expected, rev.tool + (rev.note.empty() ? "" : ": " + rev.note));
    ids.push_back(expected);
    for (const auto& w : run.scene.warnings) r.warnings.push_back(run.scene.revision.tool + ": " + w);
  }
  const Scene& s = runs.back().scene;
  std::map<std::string, int> by_type{{"line", 0}, {"arc", 0}, {"circle", 0}};
  for (const auto& p : *s.primitives) ++by_type[prim_type_name(p.shape.type)];
  const double draw_time = s.metrics.value("draw_time_s", 0.0);
  const int pen_ups = s.metrics.value("pen_up_moves", 0);
  r.revision_id = expected;
  r.fields = {{"parent_revision_id", head_seen.empty() ? json(nullptr) : json(head_seen)},
              {"stage_revision_ids", ids},
              {"primitive_count", s.primitives->size()},
              {"by_type", by_type},
              {"draw_time_s", round3(draw_time)},
              {"pen_up_moves", pen_ups},
              {"width_px", s.source->width},
              {"height_px", s.source->height},
              {"stroke_width_px", round3(s.source->stroke_width_px)}};
  r.llm_text = fmt::format("traced {}: {} primitives ({} line, {} arc, {} circle), {:.1f} s to draw, {} pen-up moves; "
                           "HEAD is {}",
                           req.image, s.primitives->size(), by_type["line"], by_type["arc"], by_type["circle"], draw_time,
                           pen_ups, expected.substr(0, 12));
  r.human_text = fmt::format("{}\n{}x{} px, stroke width {:.1f} px; recorded sv-skeleton {}, sv-fit {}, sv-route {}, "
                             "sv-simulate {}",
                             r.llm_text, s.source->width, s.source->height, s.source->stroke_width_px,
                             ids[0].get<std::string>().substr(0, 12), ids[1].get<std::string>().substr(0, 12),
                             ids[2].get<std::string>().substr(0, 12), ids[3].get<std::string>().substr(0, 12));
  return r;
}

Tool trace_image_entry() {
  using R = TraceRequest;
  Tool t = typed_tool<R>(
      48, "TraceImage", "history",
      "Start from an image (PNG, JPEG, TIFF, BMP, WebP): sv-skeleton, sv-fit, sv-route and sv-simulate into the "
      "store, recorded as their pipeline records it; HEAD ends on the simulated drawing.",
      {{field("image", &R::image,
              S::string("a relative path is from the drawing's directory (the store's parent)")),
        field("set", &R::set,
              S::with_default({{"type", "object"},
                               {"additionalProperties", {{"type", "number"}}},
                               {"description", "the stages' --set KEY=VALUE: skeleton.*, graph.*, fit.*, route.* (GetConfig)"}},
                              json::object())),
        field("fast", &R::fast,
              S::with_default(S::boolean("sv-fit --fast"), false)),
        field("footprint_mm", &R::footprint_mm,
              S::nullable(S::number("sv-route --footprint-mm (default 200)", 0))),
        field("robot", &R::robot, S::nullable(S::enumeration({"doodlebot", "plotter"}, "sv-route --robot"))),
        field("start", &R::start,
              S::nullable(S::string("sv-route --start: free or X,Y,HEADING_DEG")))},
       {"image"}},
      S::object({{"parent_revision_id", S::nullable(S::string("HEAD before the call (null: the store was empty)"))},
                 {"stage_revision_ids", S::array(S::string("a revision id"), "sv-skeleton's, sv-fit's, sv-route's, sv-simulate's")},
                 {"primitive_count", S::integer("primitives fitted")},
                 {"by_type", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}, {"description", "type -> primitives"}}},
                 {"draw_time_s", S::number("the robot's draw time")},
                 {"pen_up_moves", S::integer("pen-up moves")},
                 {"width_px", S::integer("image width")},
                 {"height_px", S::integer("image height")},
                 {"stroke_width_px", S::number("the estimated stroke width")}}),
      trace_image, ToolKind::store);
  return t;
}

// ---------------------------------------------------------------- ExportDrawing

struct ExportRequest : RegionRequest {
  std::optional<std::string> revision_id;
  std::string format;
  json options;  // the backend's option flags without "--" -> value
  std::optional<std::string> path;
};

const ExportBackend& backend_named(const std::string& name) {
  for (const ExportBackend& b : export_backends())
    if (b.name == name) return b;
  throw Error(Code::invalid_selection, "format: no backend " + name);
}

// The request's options as sv-simulate's flags read them: each one of the backend's own, a
// choice among its choices, a number within its limits, a switch true or false.
ExportSettings export_settings(const ExportBackend& b, const json& given) {
  ExportSettings out;
  for (const ExportOption& o : b.options) out[o.flag] = o.value;
  for (auto it = given.begin(); it != given.end(); ++it) {
    const std::string flag = "--" + it.key();
    auto o = std::find_if(b.options.begin(), b.options.end(), [&](const ExportOption& x) { return x.flag == flag; });
    if (o == b.options.end()) {
      std::string names;
      for (const ExportOption& x : b.options) names += (names.empty() ? "" : ", ") + x.flag.substr(2);
      throw Error(Code::invalid_selection,
                  fmt::format("options: {} takes no option '{}' ({})", b.name, it.key(), names.empty() ? "none" : names),
                  {{"option", it.key()}});
    }
    const json& v = it.value();
    auto bad = [&](const std::string& why) {
      throw Error(Code::invalid_selection, fmt::format("options: {}: {}", it.key(), why), {{"option", it.key()}});
    };
    if (o->is_switch) {
      if (!v.is_boolean()) bad("true or false");
      out[flag] = v.get<bool>() ? "true" : "false";
    } else if (v.is_string() && std::find(o->choices.begin(), o->choices.end(), v.get<std::string>()) != o->choices.end()) {
      out[flag] = v.get<std::string>();
    } else if (o->positive_number || o->non_negative_number) {
      if (!v.is_number()) bad(o->choices.empty() ? "a number" : fmt::format("a number or {}", o->choices[0]));
      const double x = v.get<double>();
      if (!std::isfinite(x) || (o->positive_number ? x <= 0 : x < 0))
        bad(o->positive_number ? "it must be positive" : "it must be at least 0");
      out[flag] = number_text(x);
    } else if (!o->choices.empty()) {
      std::string names;
      for (const auto& c : o->choices) names += (names.empty() ? "" : ", ") + c;
      bad("one of " + names);
    } else {
      if (!v.is_string()) bad("a string");
      out[flag] = v.get<std::string>();
    }
  }
  return out;
}

// `path` inside the drawing's directory, as a relative path of plain components; refuses one
// that leaves it or reaches into the store.
std::string path_inside(const std::string& path, const fs::path& dir) {
  auto refuse = [&](const std::string& why) {
    throw Error(Code::invalid_selection, fmt::format("path {}: {}", path, why), {{"path", path}, {"reason", why}});
  };
  fs::path p(path);
  if (p.is_absolute()) {
    const fs::path rel = p.lexically_normal().lexically_relative(fs::absolute(dir).lexically_normal());
    if (rel.empty() || *rel.begin() == "..") refuse("outside the drawing's directory " + dir.string());
    p = rel;
  }
  std::string out;
  for (const auto& part : p) {
    const std::string c = part.string();
    if (c.empty() || c == ".") continue;
    if (c == "..") refuse("'..' leaves the drawing's directory");
    out += (out.empty() ? "" : "/") + c;
  }
  if (out.empty() || p.filename().empty()) refuse("names no file");
  const std::string top = out.substr(0, out.find('/'));
  if (top.size() >= 6 && top.compare(top.size() - 6, 6, ".svrev") == 0) refuse("inside the revision store");
  return out;
}

// Writes the file whole or not at all (core/file.hpp), beneath the drawing's directory without
// following a symlink on the way, over a regular file only.
void write_beneath(const fs::path& dir, const std::string& rel, const std::string& bytes, const std::string& shown) {
  UniqueFd top(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top) throw Error(Code::io_error, fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno)));
  switch (entry_kind(top.get(), rel)) {
    case EntryKind::symlink:
      throw Error(Code::invalid_selection, fmt::format("path {}: a symlink is on the way or at the end; not followed", shown),
                  {{"path", shown}, {"reason", "symlink"}});
    case EntryKind::directory:
    case EntryKind::other:
      throw Error(Code::invalid_selection, fmt::format("path {}: exists and is not a regular file", shown),
                  {{"path", shown}, {"reason", "not a regular file"}});
    default:
      break;
  }
  const size_t slash = rel.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : rel.substr(0, slash);
  UniqueFd in(open_dir_beneath(top.get(), folder));
  if (!in)
    throw Error(errno == ENOENT ? Code::not_found : Code::io_error,
                fmt::format("path {}: its folder cannot be opened: {}", shown, std::strerror(errno)), {{"path", shown}});
  write_file_atomic_at(in.get(), rel.substr(slash + 1), bytes, 0666, NameSync::now, shown);
}

std::string media_type(const ExportBackend& b) {
  if (b.extension == ".json") return "application/json";
  if (b.extension == ".svg") return "image/svg+xml";
  if (b.extension == ".png") return "image/png";
  return "text/plain";  // G-code has no registered type
}

ToolResult export_drawing(const ToolContext& ctx, const ExportRequest& req) {
  const ExportBackend& b = backend_named(req.format);
  const ExportSettings settings = export_settings(b, req.options);
  Scene holder;
  std::string rid;
  const Scene& s = revision_scene(ctx, req.revision_id ? json(*req.revision_id) : json(nullptr), holder, &rid);
  if (req.region.is_object()) {
    resolve_region(s, req.region);  // an unknown id in it is not_found, as for every tool
    throw Error(Code::invalid_selection, "ExportDrawing exports the whole drawing: it takes no region");
  }
  if (!s.commands) throw Error(Code::invalid_scene, "the scene has no commands (run sv-route first)");
  // Simulated again, as sv-simulate does before it writes: a revision not simulated yet exports
  // as one that is.
  Scene simulated = s;
  drop_downstream_of_route(simulated);
  simulate(simulated, SimulateOptions{});
  const ExportInput in{simulated, ctx.store};
  ToolResult r;
  r.revision_id = rid;
  const bool picture = b.name == "view";
  // The view is drawn once: its picture for the reply, its PNG as the backend writes it.
  const cv::Mat view = picture ? export_view(in, settings) : cv::Mat();
  const std::string bytes = picture ? encode_png_rgb(view) : b.write(in, settings);
  r.fields = {{"format", b.name}, {"media_type", media_type(b)}, {"bytes", bytes.size()}, {"sha256", sha256_hex(bytes)}, {"path", nullptr}, {"text", nullptr}};
  const std::string what = fmt::format("{} of {} ({} bytes)", b.name, rid.substr(0, 12), bytes.size());
  if (req.path) {
    if (!ctx.store) throw Error(Code::not_found, "a path is taken from the drawing's directory: it needs a store (sv-commit init)");
    const fs::path dir = drawing_dir(*ctx.store);
    const std::string rel = path_inside(*req.path, dir);
    write_beneath(dir, rel, bytes, rel);
    r.fields["path"] = (dir / rel).string();
    r.llm_text = fmt::format("wrote {} to {}", what, rel);
  } else if (picture) {
    r.images["view"] = view;
    r.llm_text = "the " + what + " is the image";
  } else {
    r.fields["text"] = bytes;
    r.llm_text = fmt::format("the {} is in the text", what);
  }
  return r;
}

Tool export_drawing_entry() {
  using R = ExportRequest;
  Tool t = typed_tool<R>(
      49, "ExportDrawing", "evaluation",
      "A revision as the file sv-simulate writes: the robot's command stream, G-code, SVG, animated SVG or PNG view; "
      "to a file in the drawing's directory, or inline. Records nothing.",
      {{field("revision_id", &R::revision_id,
              S::nullable(S::string("default: HEAD"))),
        field("format", &R::format,
              S::enumeration({"commands", "gcode", "view", "svg", "animation"}, "view: PNG")),
        field("options", &R::options,
              S::with_default({{"type", "object"},
                               {"description", "the format's sv-simulate options without dashes: {\"gcode-units\": \"px\"}"}},
                              json::object())),
        field("path", &R::path,
              S::nullable(S::string("a file in the drawing's directory (the store's parent), replaced if regular; "
                                    "null: inline")))},
       {"format"}},
      S::object({{"format", S::string("the format written")},
                 {"media_type", S::string("its media type")},
                 {"bytes", S::integer("its size")},
                 {"sha256", S::string("its content hash")},
                 {"path", S::nullable(S::string("the file written"))},
                 {"text", S::nullable(S::string("the file's text, inline"))}}),
      export_drawing);
  t.views_for_model = true;  // asked for: the model looks at it
  t.inline_text = true;
  t.writes_files = true;
  return t;
}

}  // namespace

void add_pipeline_tools(std::vector<Tool>& out) {
  for (auto entry : {trace_image_entry, export_drawing_entry}) out.push_back(entry());
}

}  // namespace sv
