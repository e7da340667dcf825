// Inspection: read-only views of the scene — source, render, primitives, graph, tour, config —
// and ExplainThreshold, which ties an outcome to the threshold that decided it.
// Each tool's registry entry (catalog number, name, group, schemas) stands right after its handler.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "fit/params.hpp"
#include "fit/primitive_fit.hpp"
#include "tools/common.hpp"
#include "tools/request.hpp"
#include "tools/schema_parts.hpp"

namespace sv {

namespace {

namespace S = schema;

const char* type_letter(PrimType t) { return t == PrimType::line ? "L" : t == PrimType::arc ? "A" : "C"; }

// Integer-rounded coordinates keep listings short; exact values are in the typed fields.
std::string short_pt(Vec2 p) { return fmt::format("{},{}", std::lround(p.x), std::lround(p.y)); }

std::string geometry_text(const Shape& s) {
  switch (s.type) {
    case PrimType::line: return short_pt(s.p0) + " " + short_pt(s.p1);
    case PrimType::arc: return fmt::format("{} {} b{:.2f}", short_pt(s.p0), short_pt(s.p1), s.bulge);
    case PrimType::circle: return fmt::format("{} r{:.1f}", short_pt(s.center), s.radius);
  }
  return "";
}

// ---------------------------------------------------------------- GetSourceImage

struct SourceImageRequest : RegionRequest {
  json crop_region;  // null: the whole image
  bool annotate;
};

ToolResult get_source_image(const ToolContext& ctx, const SourceImageRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region, req.crop_region});
  if (!s.source) {
    r.warnings.push_back("the scene has no source image");
    r.fields = {{"available", false}};
    r.llm_text = "no source image in this scene";
    return r;
  }
  const Source& src = *s.source;
  std::string why;
  cv::Mat gray = source_raster(ctx, s, &why);
  r.fields = {{"available", !gray.empty()}, {"width_px", src.width}, {"height_px", src.height},
              {"stroke_width_px", round3(src.stroke_width_px)}, {"sha256", src.sha256}, {"path", src.path}};
  BBox crop = view_area(s, scope.bounds(), 2 * stroke_width_of(s));
  if (!scope.everything()) r.fields["crop"] = rect_json(crop);
  std::string where = scope.everything() ? "" : " crop " + scope.describe() + ",";
  if (gray.empty()) {
    r.warnings.push_back(why);
    r.llm_text = fmt::format("source {}x{} px, stroke ~{:.1f} px;{} raster unavailable", src.width, src.height,
                             src.stroke_width_px, where);
    return r;
  }
  int ink = 0, total = 0;
  for (int y = std::max(0, int(std::ceil(crop.y0))); y <= std::min(gray.rows - 1, int(crop.y1)); ++y)
    for (int x = std::max(0, int(std::ceil(crop.x0))); x <= std::min(gray.cols - 1, int(crop.x1)); ++x) {
      ink += gray.at<uchar>(y, x) < 128;
      ++total;
    }
  double frac = total ? double(ink) / total : 0;
  r.fields["ink_fraction"] = round3(frac);
  r.llm_text = fmt::format("source {}x{} px, stroke ~{:.1f} px,{} {:.1f}% ink", src.width, src.height,
                           src.stroke_width_px, where, 100 * frac);
  r.human_text = r.llm_text + fmt::format("; file {} (sha256 {}…)", src.path, src.sha256.substr(0, 12));
  View v(crop, fmt::format("source {}x{}{}", src.width, src.height, where.empty() ? "" : ";" + where), 720);
  // The source itself in full contrast: ink drawn dark, not the light underlay of other views.
  v.underlay(gray, color::ink);
  if (req.annotate) {
    // Scale bar of one grid step in the bottom-left corner, and a stroke-width gauge.
    Vec2 a{crop.x0 + 0.05 * crop.width(), crop.y1 - 0.05 * crop.height()};
    v.polyline({a, a + Vec2{v.grid_step(), 0}}, color::highlight, 3);
    v.text(a, fmt::format("{:g} px", v.grid_step()), color::highlight, 0, -8);
    Vec2 g{crop.x1 - 0.15 * crop.width(), crop.y1 - 0.05 * crop.height()};
    v.polyline({g, g + Vec2{src.stroke_width_px, 0}}, color::missed, std::max(2, int(v.transform().scale * 2)));
    v.text(g, fmt::format("stroke {:.1f} px", src.stroke_width_px), color::missed, 0, -8);
    v.note(fmt::format("x right, y down; pixel (col,row) centred at (col,row); grid every {:g} px", v.grid_step()));
  }
  r.images["source"] = v.finish();
  return r;
}

Tool get_source_image_entry() {
  using R = SourceImageRequest;
  Tool t = typed_tool<R>(
      1, "GetSourceImage", "inspection",
      "Show the original drawing, optionally cropped, with axes, a scale bar and the stroke width.",
      {{field("crop_region", &R::crop_region, S::region("show only this region (padded)")),
        field("annotate", &R::annotate, S::with_default(S::boolean("draw a scale bar and the stroke-width gauge"), false))}},
      S::object({{"available", S::boolean("whether the raster could be read")},
                 {"width_px", S::integer("image width")}, {"height_px", S::integer("image height")},
                 {"stroke_width_px", S::number("estimated stroke width")},
                 {"sha256", S::string("of the image file's bytes")}, {"path", S::string("as given")},
                 {"ink_fraction", S::number("share of ink pixels in the view", 0)},
                 {"crop", S::rect_region()}},
                {"available"}),
      get_source_image);
  t.views_for_model = true;
  return t;
}

// ---------------------------------------------------------------- GetCurrentRender

cv::Scalar piece_color(const Scene& s, const Drawing& d, const std::string& id, const std::string& by) {
  const Primitive* p = s.primitive(id);
  if (!p || by == "none") return color::ink;
  if (by == "primitive_type") return color::of_type(p->shape.type);
  if (by == "semantic_role") return color::of_role(p->semantic_role);
  if (by == "issue") return p->issues.empty() ? color::faded : color::missed;
  auto it = d.draw_index.find(id);
  double n = std::max<size_t>(1, d.draw_index.size() - 1);
  return color::ramp(it == d.draw_index.end() ? 0 : it->second / n);
}

std::vector<LegendEntry> legend_for(const std::string& by) {
  if (by == "primitive_type") return {{"line", color::line}, {"arc", color::arc}, {"circle", color::circle}};
  if (by == "draw_order") return {{"first drawn", color::ramp(0)}, {"middle", color::ramp(0.5)}, {"last drawn", color::ramp(1)}};
  if (by == "issue") return {{"has an issue", color::missed}, {"no issue", color::faded}};
  if (by == "semantic_role") {
    std::vector<LegendEntry> out;
    for (const char* r : {"silhouette", "interior_feature", "connector", "texture", "decoration", "frame", "annotation", "unknown"})
      out.push_back({r, color::of_role(r)});
    return out;
  }
  return {};
}

void draw_diff(View& v, const CoverageReport& cov, double sw) {
  int radius = std::max(1, static_cast<int>(std::lround(0.5 * sw * v.transform().scale)));
  for (Vec2 p : cov.missed) v.dot(p, color::missed, radius);
  for (Vec2 p : cov.spurious) v.dot(p, color::spurious, radius);
}

struct RenderRequest : RegionRequest {
  std::optional<std::string> revision;  // none: the input scene
  json crop_region;
  std::string overlay;
  bool show_pen_up_paths;
  std::string color_by;
  bool show_ids;
};

ToolResult get_current_render(const ToolContext& ctx, const RenderRequest& req) {
  ToolResult r;
  Scene holder;
  std::string rid;
  const Scene& s = revision_scene(ctx, req.revision.value_or(""), holder, &rid);
  r.revision_id = rid;
  Scope scope = scope_of_regions(s, {req.region, req.crop_region});
  Drawing d = drawing_of(s);
  const std::string& overlay = req.overlay;
  const std::string& by = req.color_by;
  std::map<std::string, int> counts = {{"line", 0}, {"arc", 0}, {"circle", 0}};
  if (s.primitives)
    for (const auto& p : *s.primitives) counts[prim_type_name(p.shape.type)]++;
  r.fields = {{"primitive_counts", counts}, {"draw_time_s", round3(d.total_s)}, {"pen_up_count", d.pen_ups},
              {"command_count", s.commands ? s.commands->size() : 0}, {"from_commands", d.from_commands}};
  if (!d.from_commands) r.warnings.push_back("no command stream: showing the primitives as they would be drawn");
  r.llm_text = fmt::format("{} primitives ({} lines, {} arcs, {} circles); draw time {:.1f} s; {} pen-ups; {} commands",
                           counts["line"] + counts["arc"] + counts["circle"], counts["line"], counts["arc"],
                           counts["circle"], d.total_s, d.pen_ups, s.commands ? s.commands->size() : 0);
  const double sw = stroke_width_of(s);
  View v = scene_view(ctx, s, scope, "render" + (scope.everything() ? "" : " of " + scope.describe()), overlay == "source");
  std::vector<LegendEntry> legend = legend_for(by);
  if (overlay == "diff") {
    const FidelityReference ref = fidelity_reference(ctx, s, r.warnings);
    CoverageReport cov = analyze_coverage(s, d, ref.paths, default_tolerance(sw), scope, true);
    draw_diff(v, cov, sw);
    r.fields["f1"] = round3(cov.metrics.f1);
    r.llm_text += fmt::format("; f1 {:.3f} vs {}", cov.metrics.f1, ref.describe());
    legend.push_back({"missed ink", color::missed});
    legend.push_back({"spurious ink", color::spurious});
  }
  if (overlay == "source") legend.push_back({"source ink", color::source});
  if (req.show_pen_up_paths) {
    for (const Polyline& p : d.pen_up) v.polyline(p, color::pen_up, 1, true);
    legend.push_back({"pen-up travel (dashed)", color::pen_up});
  }
  Scene diagnosed;
  if (by == "issue") diagnosed = with_diagnosed_issues({s, ctx.store, rid});
  for (const auto& [id, path] : d.pieces) v.polyline(path, piece_color(by == "issue" ? diagnosed : s, d, id, by), 2);
  if (req.show_ids && s.primitives)
    for (const auto& p : *s.primitives)
      if (scope.touches(p)) v.label_shape(p.shape, p.id, color::ink);
  v.legend(legend);
  r.images["render"] = v.finish();
  if (!v.labels_note().empty()) r.warnings.push_back(v.labels_note());
  return r;
}

Tool get_current_render_entry() {
  using R = RenderRequest;
  Tool t = typed_tool<R>(
      2, "GetCurrentRender", "inspection",
      "Render what the robot draws (the command stream replayed through the motion model), with "
      "optional source or missed/spurious-ink overlay, pen-up paths and colour by type, order, role or issue.",
      {{field("revision", &R::revision, S::nullable(S::string("another revision (default: the input scene)"))),
        field("crop_region", &R::crop_region, S::region("show only this region")),
        field("overlay", &R::overlay,
              S::with_default(S::enumeration({"none", "source", "diff"}, "what to draw under the render"), "none")),
        field("show_pen_up_paths", &R::show_pen_up_paths, S::with_default(S::boolean("draw pen-up travel dashed"), false)),
        field("color_by", &R::color_by,
              S::with_default(S::enumeration({"none", "primitive_type", "draw_order", "semantic_role", "issue"}, "stroke colour"),
                              "none")),
        field("show_ids", &R::show_ids, S::with_default(S::boolean("write primitive ids beside the strokes, where they overlap no other id (a warning counts those left out)"), false))}},
      S::object({{"primitive_counts", S::object({{"line", S::integer("lines")}, {"arc", S::integer("arcs")}, {"circle", S::integer("circles")}}, {},
                                                     "how many primitives of each type are drawn")},
                 {"draw_time_s", S::number("estimated drawing time", 0)},
                 {"pen_up_count", S::integer("pen-up moves")},
                 {"command_count", S::integer("commands in the stream")},
                 {"from_commands", S::boolean("false when the scene has no command stream yet")},
                 {"f1", S::number("with overlay diff: f1 against the ink (without the image, the stroke graph)", 0)}},
                {"primitive_counts", "draw_time_s", "pen_up_count"}),
      get_current_render, ToolKind::read, "sv-simulate");
  t.subcommand = "render";
  t.views_for_model = true;
  return t;
}

// ---------------------------------------------------------------- ListPrimitives

struct ListRequest : RegionRequest {
  json filter;  // primitive_filter's shape, as filtered_primitives takes it
  std::string sort_by;
  int limit;
};

ToolResult list_primitives(const ToolContext& ctx, const ListRequest& req) {
  ToolResult r;
  Scene diagnosed;
  if (wants_issues(req.filter)) diagnosed = with_diagnosed_issues(ctx);
  const Scene& s = wants_issues(req.filter) ? diagnosed : ctx.scene;
  Drawing d = drawing_of(s);
  Scope scope = scope_of_regions(s, {req.region, req.filter.value("in_region", json())});
  auto keep = filtered_primitives(s, d, req.filter, scope);
  const std::string& sort_by = req.sort_by;
  auto time_of = [&](const Primitive* p) {
    auto it = d.primitive_s.find(p->id);
    return it == d.primitive_s.end() ? 0.0 : it->second;
  };
  if (sort_by == "id") std::stable_sort(keep.begin(), keep.end(), [](auto* a, auto* b) { return a->id < b->id; });
  if (sort_by == "length_desc")
    std::stable_sort(keep.begin(), keep.end(), [](auto* a, auto* b) { return a->shape.length() > b->shape.length(); });
  if (sort_by == "draw_time_desc")
    std::stable_sort(keep.begin(), keep.end(), [&](auto* a, auto* b) { return time_of(a) > time_of(b); });
  const size_t total = keep.size(), limit = static_cast<size_t>(req.limit);
  if (keep.size() > limit) keep.resize(limit);
  json list = json::array();
  std::string table;
  for (const Primitive* p : keep) {
    list.push_back(primitive_summary(*p, d));
    table += fmt::format("{} {} {} {} {}\n", p->id, type_letter(p->shape.type), geometry_text(p->shape),
                         std::lround(p->shape.length()), std::lround(1000 * time_of(p)));
  }
  r.fields = {{"primitives", list}, {"total_count", total}};
  std::string head = fmt::format("{} of {} primitives{}, by {}", keep.size(), total,
                                 scope.everything() ? "" : " in " + scope.describe(), sort_by);
  r.llm_text = head + "; id type geometry(L p0 p1|A p0 p1 bulge|C centre radius) length_px draw_ms\n" + table;
  r.human_text = r.llm_text;
  if (!s.primitives) r.warnings.push_back("the scene has no primitives yet (run sv-fit)");
  View v = scene_view(ctx, s, scope, head);
  for (const Primitive* p : keep) v.shape(p->shape, color::of_type(p->shape.type), 2);
  for (const Primitive* p : keep) v.label_shape(p->shape, p->id, color::ink);
  v.legend(legend_for("primitive_type"));
  r.images["primitives"] = v.finish();
  if (!v.labels_note().empty()) r.warnings.push_back(v.labels_note());
  return r;
}

// One row of ListPrimitives (GetPrimitive's detail extends it).
json primitive_summary_schema() {
  return S::object({{"id", S::id("primitive id")}, {"type", S::primitive_type()}, {"p0", S::point()}, {"p1", S::point()},
                    {"bulge", S::number("tan(sweep/4)")}, {"center", S::point()}, {"radius", S::number("px", 0)},
                    {"length_px", S::number("length along the primitive", 0)}, {"est_draw_time_ms", S::number("drawing time of its command(s)", 0)},
                    {"semantic_role", S::semantic_role()},
                    {"issues", S::array(S::string("issue"), "stored ones; with a has_issue filter also what the diagnostics find")},
                    {"draw_index", S::nullable(S::integer("position in the draw order"))}},
                   {"id", "type", "length_px", "est_draw_time_ms", "draw_index"}, "one primitive");
}

Tool list_primitives_entry() {
  using R = ListRequest;
  return typed_tool<R>(
      3, "ListPrimitives", "inspection",
      "List primitives (filter by type, region, role, issue, length, draw time; sort; limit) as a compact table.",
      {{field("filter", &R::filter, S::with_default(S::primitive_filter(), json::object())),
        field("sort_by", &R::sort_by,
              S::with_default(S::enumeration({"draw_order", "draw_time_desc", "length_desc", "id"}, "order of the rows"),
                              "draw_order")),
        field("limit", &R::limit, S::with_default(S::integer("at most this many rows"), 200))}},
      S::object({{"primitives", S::array(primitive_summary_schema(), "the rows")}, {"total_count", S::integer("matches before the limit")}},
                {"primitives", "total_count"}),
      list_primitives);
}

// ---------------------------------------------------------------- GetPrimitive

// Turning between two headings, the short way, in radians.
double turn_between(Vec2 from, Vec2 to) { return std::atan2(cross(from, to), dot(from, to)); }

struct PrimitiveRequest : RegionRequest {
  std::string id;
  bool include_source_points;
  bool include_neighbors;
  bool include_fit_residuals;
};

ToolResult get_primitive(const ToolContext& ctx, const PrimitiveRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  const Primitive& p = primitive_or_throw(s, req.id);
  const Shape& sh = p.shape;
  const Scope scope = scope_of_regions(s, {req.region});  // limits the geometric neighbours listed
  Drawing d = drawing_of(s);
  json det = primitive_summary(p, d);
  if (sh.type == PrimType::arc) {
    double chord = dist(sh.p0, sh.p1);
    det["sweep_rad"] = round_to(sh.sweep_rad(), 1e-6);
    det["chord_px"] = round3(chord);
    det["sagitta_px"] = round3(std::abs(sh.bulge) * chord / 2);
  }
  if (sh.type == PrimType::circle) det["sweep_rad"] = round_to(2 * kPi, 1e-6);
  det["fit_rms_px"] = round3(p.fit_rms_px);
  det["fit_max_px"] = round3(p.fit_max_px);
  det["source_polyline_id"] = p.edge.empty() ? json(nullptr) : json(p.edge);
  Polyline src = source_points(s, p);
  if (!p.edge.empty()) det["source_span"] = {p.span0, p.span1};
  if (req.include_source_points) {
    json pts = json::array();
    for (Vec2 q : src) pts.push_back(point_json(q));
    det["source_points"] = pts;
  }
  if (req.include_fit_residuals) {
    json res = json::array();
    for (Vec2 q : src) res.push_back(round3(sh.distance_to(q)));
    det["residuals_px"] = res;
  }
  // Context in the tour: travel commands just before and after this primitive.
  std::string in_id, out_id;
  double spin_in = 0, spin_out = 0;
  bool up_before = false, up_after = false;
  for (const auto& st : d.steps) {
    if (st.pen_down) continue;
    double turn = st.cmd.kind == Command::Kind::spin ? deg2rad(st.cmd.degrees) : 0;
    if (st.before == p.id) {
      in_id = st.after, spin_in += turn;
      up_before = up_before || st.cmd.kind == Command::Kind::line;
    }
    if (st.after == p.id) {
      out_id = st.before, spin_out += turn;
      up_after = up_after || st.cmd.kind == Command::Kind::line;
    }
  }
  // Consecutive drawn primitives with no travel between them are still neighbours in the tour.
  auto order = draw_order(s);
  auto pos = std::find(order.begin(), order.end(), p.id);
  if (s.tour && pos != order.end()) {
    if (in_id.empty() && pos != order.begin()) in_id = *(pos - 1);
    if (out_id.empty() && pos + 1 != order.end()) out_id = *(pos + 1);
  }
  if (req.include_neighbors) {
    det["incoming_neighbor_id"] = in_id.empty() ? json(nullptr) : json(in_id);
    det["outgoing_neighbor_id"] = out_id.empty() ? json(nullptr) : json(out_id);
    det["incoming_spin_rad"] = round_to(spin_in, 1e-6);
    det["outgoing_spin_rad"] = round_to(spin_out, 1e-6);
    // Primitives touching this one at an end (within a stroke width): its geometric neighbours.
    json touching = json::array();
    const double sw = stroke_width_of(s);
    if (s.primitives)
      for (const auto& q : *s.primitives) {
        if (q.id == p.id || !scope.touches(q)) continue;
        bool touch = false;
        for (Vec2 e : {sh.start(), sh.end()}) touch = touch || (sh.type != PrimType::circle && q.shape.distance_to(e) <= sw);
        for (Vec2 e : {q.shape.start(), q.shape.end()})
          touch = touch || (q.shape.type != PrimType::circle && sh.distance_to(e) <= sw);
        if (touch) touching.push_back(q.id);
      }
    det["touching_ids"] = touching;
  }
  det["pen_up_before"] = up_before;
  det["pen_up_after"] = up_after;
  r.fields = {{"detail", det}};
  r.llm_text = fmt::format("{} {} {} len {:.1f} px, fit rms {:.2f} max {:.2f} px over {} source points; "
                           "drawn #{} in {:.0f} ms; in from {} (spin {:.0f}°{}), out to {} (spin {:.0f}°{})",
                           p.id, prim_type_name(sh.type), geometry_text(sh), sh.length(), p.fit_rms_px, p.fit_max_px,
                           src.size(), det["draw_index"].is_null() ? std::string("-") : det["draw_index"].dump(),
                           det["est_draw_time_ms"].get<double>(), in_id.empty() ? "start" : in_id, rad2deg(spin_in),
                           up_before ? ", pen up" : "", out_id.empty() ? "end" : out_id, rad2deg(spin_out),
                           up_after ? ", pen up" : "");
  r.human_text = r.llm_text + fmt::format("; role {}; issues {}", p.semantic_role, json(p.issues).dump());
  BBox focus;
  for (Vec2 q : sh.sample(1.0)) focus.add(q);
  View v = crop_view(ctx, s, focus, 4 * stroke_width_of(s), p.id + " highlighted, neighbours faded", 480);
  if (s.primitives)
    for (const auto& q : *s.primitives)
      if (q.id != p.id) {
        v.shape(q.shape, color::faded, 2);
        if (q.id == in_id || q.id == out_id) v.label_shape(q.shape, q.id, color::pen_up);
      }
  // Source points at least 6 view pixels apart, over the primitive, so both stay visible.
  v.shape(sh, color::highlight, 3);
  Vec2 last{INFINITY, INFINITY};
  for (Vec2 q : src)
    if (dist(q, last) * v.transform().scale >= 6) v.dot(q, color::missed, 2), last = q;
  v.arrow(sh.at(0.45), sh.at(0.55), color::highlight, 2);
  v.label_shape(sh, p.id, color::highlight);
  v.legend({{p.id, color::highlight}, {"source points", color::missed}, {"other primitives", color::faded}});
  r.images["primitive"] = v.finish();
  return r;
}

// GetPrimitive's detail: ListPrimitives' row and the fit, source and tour facts around it.
json primitive_detail_schema() {
  json detail = primitive_summary_schema();
  for (auto [k, v] : std::vector<std::pair<const char*, json>>{
           {"sweep_rad", S::number("signed sweep")}, {"sagitta_px", S::number("height of the arc over its chord", 0)},
           {"chord_px", S::number("distance between its ends", 0)},
           {"source_polyline_id", S::nullable(S::string("graph edge it was fitted to"))},
           {"source_span", S::array(S::integer("a point index"), "index range on the edge")},
           {"source_points", S::array(S::point(), "the edge points it was fitted to")},
           {"residuals_px", S::array(S::number("px", 0), "distance of each source point to the primitive")},
           {"fit_rms_px", S::number("rms distance of its source points", 0)},
           {"fit_max_px", S::number("largest distance of a source point", 0)},
           {"incoming_neighbor_id", S::nullable(S::string("drawn just before"))},
           {"outgoing_neighbor_id", S::nullable(S::string("drawn just after"))},
           {"incoming_spin_rad", S::number("turn in place before it")}, {"outgoing_spin_rad", S::number("turn in place after it")},
           {"touching_ids", S::array(S::id("primitive id"), "primitives touching its ends")},
           {"pen_up_before", S::boolean("the pen lifts before it is drawn")},
           {"pen_up_after", S::boolean("the pen lifts after it is drawn")}})
    detail["properties"][k] = v;
  detail["required"].push_back("pen_up_before");
  detail["description"] = "the primitive, its fit, source and neighbours";
  detail["required"].push_back("pen_up_after");
  return detail;
}

Tool get_primitive_entry() {
  using R = PrimitiveRequest;
  return typed_tool<R>(4, "GetPrimitive", "inspection",
                       "Everything about one primitive: geometry, the source points it was fitted to and their residuals, "
                       "its neighbours in the tour with the spins and pen-ups around it.",
                       {{field("id", &R::id, S::id("the primitive")),
                         field("include_source_points", &R::include_source_points, S::with_default(S::boolean("list the edge points it was fitted to"), true)),
                         field("include_neighbors", &R::include_neighbors, S::with_default(S::boolean("name what is drawn before and after it"), true)),
                         field("include_fit_residuals", &R::include_fit_residuals, S::with_default(S::boolean("list each source point's distance to it"), true))},
                        {"id"}},
                       S::object({{"detail", primitive_detail_schema()}}, {"detail"}), get_primitive);
}

// ---------------------------------------------------------------- GetGraph

struct GraphRequest : RegionRequest {
  json in_region;
  bool include_loop_edges;
};

ToolResult get_graph(const ToolContext& ctx, const GraphRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region, req.in_region});
  json vs = json::array(), es = json::array();
  int odd = 0;
  std::string text;
  View v = scene_view(ctx, s, scope, "stroke graph" + (scope.everything() ? "" : " in " + scope.describe()));
  if (!s.graph) {
    r.warnings.push_back("the scene has no stroke graph (run sv-skeleton)");
  } else {
    std::map<std::string, std::vector<std::string>> prims_of_edge;
    if (s.primitives)
      for (const auto& p : *s.primitives)
        if (!p.edge.empty()) prims_of_edge[p.edge].push_back(p.id);
    const bool loops = req.include_loop_edges;
    for (const auto& e : s.graph->edges) {
      if ((!loops && e.closed) || !scope.touches(e.points)) continue;
      es.push_back({{"id", e.id}, {"v0", e.v0}, {"v1", e.v1}, {"closed", e.closed},
                    {"length_px", round3(polyline_length(e.points))}, {"primitive_ids", prims_of_edge[e.id]}});
      v.polyline(e.points, e.closed ? color::circle : color::line, 2);
      text += fmt::format("{} {}-{}{} {}px [{}]\n", e.id, e.v0, e.v1, e.closed ? " closed" : "",
                          std::lround(polyline_length(e.points)), fmt::join(prims_of_edge[e.id], ","));
    }
    std::string odd_ids;
    for (const auto& vx : s.graph->vertices) {
      if (!scope.contains(vx.p)) continue;
      bool is_odd = vx.degree % 2 == 1;
      odd += is_odd;
      if (is_odd) odd_ids += (odd_ids.empty() ? "" : ",") + vx.id;
      vs.push_back({{"id", vx.id}, {"position", point_json(vx.p)}, {"degree", vx.degree}, {"odd_degree", is_odd},
                    {"kind", vx.kind}});
      v.dot(vx.p, is_odd ? color::missed : color::spurious, 4);
      v.text(vx.p, fmt::format("{} d{}", vx.id, vx.degree), color::ink);
    }
    text = fmt::format("{} vertices ({} odd: {}), {} edges; edge v0-v1 length [primitives]:\n", vs.size(), odd,
                       odd_ids.empty() ? "none" : odd_ids, es.size()) + text;
  }
  r.fields = {{"vertices", vs}, {"edges", es}, {"odd_vertex_count", odd}};
  r.llm_text = text.empty() ? "no stroke graph" : text;
  r.human_text = r.llm_text + fmt::format("An Euler tour needs {} pen-up(s) at least (odd vertices / 2 - 1).\n",
                                          std::max(0, odd / 2 - 1));
  v.legend({{"odd-degree vertex", color::missed}, {"even-degree vertex", color::spurious}, {"open edge", color::line},
            {"closed edge", color::circle}});
  r.images["graph"] = v.finish();
  return r;
}

Tool get_graph_entry() {
  using R = GraphRequest;
  return typed_tool<R>(
      5, "GetGraph", "inspection",
      "The stroke graph: vertices with degree and odd-degree flag, edges with the primitives fitted to them.",
      {{field("in_region", &R::in_region, S::region("only vertices and edges in this region")),
        field("include_loop_edges", &R::include_loop_edges, S::with_default(S::boolean("include closed edges"), true))}},
      S::object({{"vertices", S::array(S::object({{"id", S::id("vertex id")}, {"position", S::point()},
                                                  {"degree", S::integer("edges meeting there")},
                                                  {"odd_degree", S::boolean("an odd number of edges meet there")},
                                                  {"kind", S::string("end, junction, crossing, loop, dot")}},
                                                 {"id", "position", "degree", "odd_degree"}, "one vertex"), "the graph's vertices")},
                 {"edges", S::array(S::object({{"id", S::id("edge id")}, {"v0", S::string("the vertex it starts at")},
                                               {"v1", S::string("the vertex it ends at")}, {"closed", S::boolean("a loop")},
                                               {"length_px", S::number("length of its polyline", 0)},
                                               {"primitive_ids", S::array(S::id("primitive id"), "the primitives fitted to it")}},
                                              {"id", "v0", "v1", "primitive_ids"}, "one edge"), "the graph's edges")},
                 {"odd_vertex_count", S::integer("vertices of odd degree: each pair costs a pen-up")}},
                {"vertices", "edges", "odd_vertex_count"}),
      get_graph);
}

// ---------------------------------------------------------------- GetTour

struct Transition {
  std::string kind = "none";  // none, spin, line (pen-up travel, with any spins)
  double time_s = 0, spin_deg = 0, travel_px = 0;
  bool pen_up = false;
};

// What each tour step costs, in drawing order: the travel and spins since the last stroke go to
// the stroke that follows them, and each stroke's time to the step it draws. A primitive drawn
// in parts has one entry per part (queued under its id); a command that continues the last
// stroke without moving in between adds to its entry; a merged line's time is shared by length.
struct StepCost {
  Transition in;
  double draw_s = 0;
};

std::map<std::string, std::deque<StepCost>> step_costs(const Scene& s, const Drawing& d) {
  std::map<std::string, std::deque<StepCost>> out;
  Transition pending;
  bool moved = false;
  std::string last;
  for (const auto& st : d.steps) {
    if (!st.pen_down) {
      pending.time_s += st.time_s;
      moved = true;
      if (st.cmd.kind == Command::Kind::spin) {
        pending.spin_deg += std::abs(st.cmd.degrees);
        if (pending.kind == "none") pending.kind = "spin";
      } else {
        pending.travel_px += std::abs(st.cmd.distance);
        pending.pen_up = true;
        pending.kind = "line";
      }
      continue;
    }
    const std::vector<std::string> ids = primitive_ids(st.cmd.primitive);
    double total_len = 0;
    for (const auto& id : ids) total_len += s.primitive(id) ? s.primitive(id)->shape.length() : 0;
    for (size_t k = 0; k < ids.size(); ++k) {
      auto& q = out[ids[k]];
      if (k > 0 || moved || ids[k] != last || q.empty()) q.push_back({k == 0 ? pending : Transition{}, 0});
      const double len = s.primitive(ids[k]) ? s.primitive(ids[k])->shape.length() : 0;
      q.back().draw_s += st.time_s * (total_len > 0 ? len / total_len : 1.0 / ids.size());
    }
    if (!ids.empty()) {
      pending = Transition{};
      moved = false;
      last = ids.back();
    }
  }
  return out;
}

struct TourRequest : RegionRequest {
  std::optional<std::string> revision;  // none: the input scene
  std::optional<int> only_top_k_costly;  // none: every step
};

ToolResult get_tour(const ToolContext& ctx, const TourRequest& req) {
  ToolResult r;
  Scene holder;
  const Scene& s = revision_scene(ctx, req.revision.value_or(""), holder, &r.revision_id);
  Scope scope = scope_of_regions(s, {req.region});
  Drawing d = drawing_of(s);
  auto costs = step_costs(s, d);
  json steps = json::array();
  std::vector<std::pair<double, size_t>> costly;
  if (!s.tour) r.warnings.push_back("the scene has no tour yet (run sv-route)");
  if (s.tour && !d.from_commands) r.warnings.push_back("no command stream: times are unknown (run sv-route)");
  int index = 0;
  // Everything but drawing (spins, travel, pen lifts and drops), once: the totals add up to the
  // simulated draw time.
  const double transition_total = d.total_s - d.draw_s;
  if (s.tour)
    for (const auto& t : *s.tour) {
      const Primitive* p = s.primitive(t.primitive);
      if (!p) continue;
      StepCost cost;
      if (auto q = costs.find(t.primitive); q != costs.end() && !q->second.empty()) {
        cost = q->second.front();
        q->second.pop_front();
      }
      const Transition& tr = cost.in;
      int i = index++;
      if (!scope.touches(*p)) continue;
      double magnitude = tr.kind == "line" ? tr.travel_px : tr.spin_deg;
      steps.push_back({{"index", i}, {"primitive_id", t.primitive}, {"direction", t.reverse ? "reverse" : "forward"},
                       {"draw_time_ms", round3(1000 * cost.draw_s)},
                       {"transition_in", {{"kind", tr.kind}, {"time_ms", round3(1000 * tr.time_s)},
                                          {"magnitude", round3(magnitude)}, {"spin_deg", round3(tr.spin_deg)},
                                          {"travel_px", round3(tr.travel_px)}}},
                       {"pen_up_before", tr.pen_up}});
      if (!t.whole()) steps.back()["part"] = {round3(t.t0), round3(t.t1)};
      costly.push_back({tr.time_s, steps.size() - 1});
    }
  if (req.only_top_k_costly) {
    const size_t k = static_cast<size_t>(*req.only_top_k_costly);
    std::stable_sort(costly.begin(), costly.end(), [](auto& a, auto& b) { return a.first > b.first; });
    if (costly.size() > k) costly.resize(k);
    json top = json::array();
    for (auto& [t, i] : costly) top.push_back(steps[i]);
    steps = top;
  }
  r.fields = {{"steps", steps}, {"total_draw_time_ms", round3(1000 * d.total_s)}, {"total_pen_up_count", d.pen_ups},
              {"transition_time_ms", round3(1000 * transition_total)}};
  std::string text = fmt::format("{} steps shown; total {:.1f} s ({:.1f} s drawing, {:.1f} s turning, travel and pen lifts), {} pen-ups; "
                                 "# id dir draw_ms <- transition kind ms\n",
                                 steps.size(), d.total_s, d.draw_s, transition_total, d.pen_ups);
  for (const auto& st : steps)
    text += fmt::format("{} {} {} {:.0f} <- {} {:.0f}\n", st["index"].get<int>(), st["primitive_id"].get<std::string>(),
                        st["direction"] == "forward" ? "fwd" : "rev", st["draw_time_ms"].get<double>(),
                        st["transition_in"]["kind"].get<std::string>(), st["transition_in"]["time_ms"].get<double>());
  r.llm_text = text;
  View v = scene_view(ctx, s, scope, "draw order (blue first, red last); pen-up travel dashed");
  for (const Polyline& p : d.pen_up) v.polyline(p, color::pen_up, 1, true);
  const double n = std::max(1.0, double(d.draw_index.size()) - 1);
  for (const auto& [id, path] : d.pieces) {
    auto it = d.draw_index.find(id);
    v.polyline(path, color::ramp(it == d.draw_index.end() ? 0 : it->second / n), 2);
  }
  if (s.tour)
    for (const auto& t : *s.tour) {
      const Primitive* p = s.primitive(t.primitive);
      if (!p || !scope.touches(*p)) continue;
      Shape sh = t.reverse ? p->shape.reversed() : p->shape;
      double e = deg2rad(t.entry_deg);
      v.arrow(sh.at(0.4, e), sh.at(0.6, e), color::ink, 1);
      auto it = d.draw_index.find(t.primitive);
      if (it != d.draw_index.end()) v.text(sh.at(0, e), std::to_string(it->second), color::ink, 3, -3);
    }
  v.legend({{"first drawn", color::ramp(0)}, {"last drawn", color::ramp(1)}, {"pen-up travel", color::pen_up}});
  r.images["tour"] = v.finish();
  return r;
}

Tool get_tour_entry() {
  using R = TourRequest;
  return typed_tool<R>(
      6, "GetTour", "inspection",
      "The draw order with per-step drawing time and the spin or pen-up travel before each step; or the k costliest.",
      {{field("revision", &R::revision, S::nullable(S::string("another revision (default: the input scene)"))),
        field("only_top_k_costly", &R::only_top_k_costly,
              S::nullable(S::integer("return only the k steps with the costliest way in", 1)))}},
      S::object({{"steps", S::array(S::object({{"index", S::integer("position in the draw order, from 0")},
                                               {"primitive_id", S::string("what it draws")},
                                               {"direction", S::enumeration({"forward", "reverse"}, "from p0 to p1, or back")},
                                               {"draw_time_ms", S::number("time drawing it", 0)},
                                               {"transition_in", S::object({{"kind", S::enumeration({"none", "spin", "line"}, "how the robot gets there")},
                                                                            {"time_ms", S::number("time getting there", 0)}, {"magnitude", S::number("degrees or px", 0)},
                                                                            {"spin_deg", S::number("turn in place", 0)}, {"travel_px", S::number("pen-up travel", 0)}},
                                                                           {"kind", "time_ms", "magnitude"}, "the way in from the step before")},
                                               {"pen_up_before", S::boolean("the pen lifts before it")},
                                               {"part", S::array(S::number("a fraction, 0 to 1", 0),
                                                                 "[t0, t1]: the step draws this arc-length fraction of the "
                                                                 "primitive (a line through a T is drawn in parts); absent: all")}},
                                              {"index", "primitive_id", "direction", "draw_time_ms", "transition_in", "pen_up_before"},
                                              "one step"), "the steps, in draw order")},
                 {"total_draw_time_ms", S::number("the whole drawing's time", 0)}, {"total_pen_up_count", S::integer("pen-ups in all")},
                 {"transition_time_ms", S::number("time spent turning and travelling", 0)}},
                {"steps", "total_draw_time_ms", "total_pen_up_count"}),
      get_tour);
}

// ---------------------------------------------------------------- GetConfig

// A setting's doc and unit from the stage's parameter table; the scene's own doc for a key no
// stage declares (any more).
json declared_doc(const std::string& key, const json& recorded) {
  const ParamSpec* spec = find_stage_param(key);
  return {{"doc", spec ? spec->doc : recorded.value("doc", "")}, {"unit", spec ? spec->unit : ""}};
}

struct ConfigRequest : RegionRequest {
  std::optional<std::vector<std::string>> keys;  // not given: every key (given empty: none)
};

ToolResult get_config(const ToolContext& ctx, const ConfigRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  if (Scope scope = scope_of_regions(s, {req.region}); !scope.everything())
    r.warnings.push_back("thresholds apply to the whole drawing; use ExplainThreshold for those that decided " + scope.describe());
  json entries = json::array();
  std::string text;
  for (auto it = s.config.begin(); it != s.config.end(); ++it) {
    bool wanted = !req.keys;
    if (req.keys)
      for (const auto& k : *req.keys) wanted = wanted || it.key().rfind(k, 0) == 0;
    if (!wanted) continue;
    const json& e = it.value();
    json entry = {{"key", it.key()}, {"value", e.value("value", json())}, {"from", e.value("from", "default")}};
    entry.update(declared_doc(it.key(), e));
    entries.push_back(entry);
    text += fmt::format("{}={} ({})\n", it.key(), e.value("value", json()).dump(), e.value("from", "default"));
  }
  if (s.config.empty()) r.warnings.push_back("the scene records no configuration yet");
  r.fields = {{"entries", entries}, {"stroke_width_px", round3(s.source ? s.source->stroke_width_px : 0)}};
  r.llm_text = fmt::format("{} settings (key=value (provenance)); stroke width {:.2f} px\n", entries.size(),
                           s.source ? s.source->stroke_width_px : 0) + text;
  r.human_text = r.llm_text;
  for (const auto& e : entries) r.human_text += fmt::format("  {}: {}\n", e["key"].get<std::string>(), e["doc"].get<std::string>());
  return r;
}

Tool get_config_entry() {
  using R = ConfigRequest;
  return typed_tool<R>(
      7, "GetConfig", "inspection",
      "Every threshold of every stage as resolved for this drawing, with its provenance (default, stroke width, user).",
      {{field("keys", &R::keys, S::array(S::string("key or prefix, e.g. fit."), "only these keys"))}},
      S::object({{"entries", S::array(S::object({{"key", S::string("stage.name")}, {"value", S::any("its value")},
                                                 {"from", S::string("default, stroke_width or user")},
                                                 {"doc", S::string("what it decides")}, {"unit", S::string("its unit")}},
                                                {"key", "value", "from"}, "one threshold"), "the thresholds")},
                 {"stroke_width_px", S::number("the estimated stroke width", 0)}},
                {"entries"}),
      get_config);
}

// ---------------------------------------------------------------- ExplainThreshold

struct Explanation {
  std::string key, measured_what, outcome, counterfactual;
  double measured = 0;
  json would_change_at;  // threshold value at which the outcome flips, or null
};

json explanation_json(const Scene& s, const Explanation& e) {
  const json& c = s.config.at(e.key);
  json j = {{"key", e.key}, {"value", c.value("value", json())}, {"from", c.value("from", "default")},
            {"measured", round3(e.measured)}, {"measured_what", e.measured_what},
            {"outcome", e.outcome}, {"would_change_at", e.would_change_at}, {"counterfactual", e.counterfactual}};
  j.update(declared_doc(e.key, c));
  return j;
}

// The sharpest turn (degrees) between this primitive and the pieces it joins on its own edge.
double joint_deflection_deg(const Scene& s, const Primitive& p) {
  double worst = 0;
  if (!s.primitives || p.shape.type == PrimType::circle) return 0;
  for (const auto& q : *s.primitives) {
    if (q.id == p.id || q.edge != p.edge || q.shape.type == PrimType::circle) continue;
    if (dist(q.shape.p1, p.shape.p0) < 1e-3)
      worst = std::max(worst, std::abs(rad2deg(turn_between(q.shape.end_tangent(), p.shape.start_tangent()))));
    if (dist(p.shape.p1, q.shape.p0) < 1e-3)
      worst = std::max(worst, std::abs(rad2deg(turn_between(p.shape.end_tangent(), q.shape.start_tangent()))));
  }
  return worst;
}

// What the graph measured of the filled mark the primitive was fitted to, if it was.
const MarkRecord* mark_of(const Scene& s, const Primitive& p) {
  if (!s.graph) return nullptr;
  std::vector<std::string> edges{p.edge};
  for (const SourceSpan& m : p.more_sources) edges.push_back(m.edge);
  for (const std::string& id : edges)
    if (const Edge* e = s.graph->edge(id); e && e->mark) return &*e->mark;
  return nullptr;
}

// The nearest vertex `keep` accepts within half a stroke width of the primitive (at its end,
// or on its way where a stroke touches it).
template <class Keep>
const Vertex* vertex_at(const Scene& s, const Primitive& p, Keep keep) {
  if (!s.graph) return nullptr;
  const Vertex* best = nullptr;
  double nearest = std::max(1.0, stroke_width_of(s) / 2);
  for (const Vertex& v : s.graph->vertices) {
    if (!keep(v)) continue;
    const double d = fitting::max_distance(p.shape, fitting::Points(&v.p, 1));
    if (d <= nearest) nearest = d, best = &v;
  }
  return best;
}

// The thresholds of the rule that kept a circle whole where a stem touches it tangentially
// (graph/junctions.cpp, resolve_tangent_circle), against what it measured at the contact.
void explain_tangent(const Scene& s, const Vertex& v, std::vector<Explanation>& out) {
  const TangentRecord& t = *v.tangent;
  auto value = [&](const char* k) { return config_value(s, k, 0); };
  const std::string at = fmt::format("at {}, where the stem {} the {}", v.id, t.stems == 1 ? "ends on" : "touches",
                                     t.arc ? "arc" : "circle");
  if (s.config.contains("graph.tangent_circle_offset_px")) {
    // On an arc the stem's line must touch the circle from either side; on a loop it may pass inside.
    const double off = std::max(t.circle_off_px, t.arc ? std::abs(t.line_gap_px) : t.line_gap_px),
                 limit = value("graph.tangent_circle_offset_px");
    out.push_back({"graph.tangent_circle_offset_px",
                   "largest of: the circle's own ink off the circle, and the stem's line outside it, px",
                   fmt::format("{}: the {}'s own ink keeps within {:.2f} px of its circle and the stem's line passes "
                               "{:.2f} px outside it, within {:.2f} px: the {} runs on its circle through the contact",
                               at, t.arc ? "arc" : "circle", t.circle_off_px, t.line_gap_px, limit,
                               t.arc ? "arc" : "circle"),
                   fmt::format("a limit below {:.2f} px would have left the contact to the other junction rules", off),
                   off, round3(off)});
  }
  if (t.arc) return;  // the angles decide loops only
  if (s.config.contains("graph.tangent_stem_exact_deg")) {
    const double exact = value("graph.tangent_stem_exact_deg");
    const bool tangent = t.meet_deg <= exact;
    out.push_back({"graph.tangent_stem_exact_deg", "angle between the stem's line and the circle, degrees",
                   tangent ? fmt::format("{}: they meet at {:.1f}°, within {:.1f}°: the stem is the circle's tangent, "
                                         "touching it at the foot of the centre on its line", at, t.meet_deg, exact)
                           : fmt::format("{}: they meet at {:.1f}°, steeper than {:.1f}°: the stem starts where its "
                                         "line crosses the circle", at, t.meet_deg, exact),
                   tangent ? fmt::format("a limit below {:.1f}° would have {}", t.meet_deg,
                                         t.stems == 1 ? "moved the contact to where the line crosses the circle (or "
                                                        "left it to the other junction rules)"
                                                      : "left the contact to the other junction rules")
                           : fmt::format("a limit at or above {:.1f}° would have put the contact at the foot of the "
                                         "centre", t.meet_deg),
                   t.meet_deg, round3(t.meet_deg)});
  }
  if (!s.config.contains("graph.tangent_stem_max_deg") || !s.config.contains("graph.circle_stem_offset_px")) return;
  // A stem steeper than tangent_stem_max_deg keeps the circle whole only when the circle's own
  // ink keeps within circle_stem_offset_px of it.
  const double steep = value("graph.tangent_stem_max_deg"), round_enough = value("graph.circle_stem_offset_px");
  if (t.meet_deg <= steep)
    out.push_back({"graph.tangent_stem_max_deg", "angle between the stem's line and the circle, degrees",
                   fmt::format("{}: they meet at {:.1f}°, within {:.1f}°: the circle is kept whole however its own ink "
                               "bends", at, t.meet_deg, steep),
                   t.circle_off_px > round_enough
                       ? fmt::format("a limit below {:.1f}° would have left the contact to the other junction rules "
                                     "(the circle's ink keeps {:.2f} px off it, more than graph.circle_stem_offset_px)",
                                     t.meet_deg, t.circle_off_px)
                       : fmt::format("its ink keeps within graph.circle_stem_offset_px of the circle, so no limit would "
                                     "change it"),
                   t.meet_deg, t.circle_off_px > round_enough ? json(round3(t.meet_deg)) : json(nullptr)});
  else
    out.push_back({"graph.circle_stem_offset_px", "largest distance of the circle's own ink from it, px",
                   fmt::format("{}: the stem meets it at {:.1f}°, steeper than graph.tangent_stem_max_deg, and its ink "
                               "keeps within {:.2f} px of the circle (limit {:.2f} px): kept whole", at, t.meet_deg,
                               t.circle_off_px, round_enough),
                   fmt::format("a limit below {:.2f} px would have left the contact to the other junction rules",
                               t.circle_off_px),
                   t.circle_off_px, round3(t.circle_off_px)});
}

// The graph's thresholds that made ink a filled mark (or a small loop filled in) and chose how
// it is drawn, against the figures the graph recorded for it.
void explain_mark(const Scene& s, const MarkRecord& m, std::vector<Explanation>& out) {
  auto has = [&](const char* k) { return s.config.contains(k); };
  auto value = [&](const char* k) { return config_value(s, k, 0); };
  const double d = m.diameter_px;
  const std::string what = "width of the mark's largest inscribed ink disc, px";
  if (has("graph.filled_min_diameter_px")) {
    const double mn = value("graph.filled_min_diameter_px");
    out.push_back({"graph.filled_min_diameter_px", what,
                   m.loop ? fmt::format("its ink is {:.2f} px across, under the {:.2f} px of a filled mark, so it may be a "
                                        "small loop filled in", d, mn)
                          : fmt::format("its ink is {:.2f} px across, at least the {:.2f} px of a filled mark: its tangle "
                                        "of thinned branches was replaced by strokes that cover its ink", d, mn),
                   m.loop ? fmt::format("a minimum at or below {:.2f} px would have left it to the filled marks' rules", d)
                          : fmt::format("a minimum above {:.2f} px would not have made it a filled mark", d),
                   d, round3(d)});
  }
  if (m.loop && has("graph.filled_loop_diameter_px")) {
    const double mn = value("graph.filled_loop_diameter_px");
    out.push_back({"graph.filled_loop_diameter_px", what,
                   fmt::format("{:.2f} px is at least the {:.2f} px of a small loop filled in: drawn as its {}", d, mn,
                               m.drawn_as == "dot" ? "dot" : "outline inset by half a stroke width"),
                   fmt::format("a limit above {:.2f} px would have left it to thinning", d), d, round3(d)});
  }
  if (m.loop && has("graph.filled_loop_reach_px")) {
    const double reach = value("graph.filled_loop_reach_px");
    out.push_back({"graph.filled_loop_reach_px", "distance from every stroke beyond which at least a third of its core lies, px",
                   fmt::format("{:.0f} % of its core lies farther than {:.2f} px from every stroke but thinning's spurs "
                               "ending in it (a third is enough): the stroke ran past the loop", 100 * m.unreached, reach),
                   fmt::format("a reach of {:.2f} px or more would have left it to thinning", m.flip_reach_px),
                   m.flip_reach_px, round3(m.flip_reach_px)});
  }
}

std::vector<Explanation> explain_primitive(const Scene& s, const Primitive& p) {
  std::vector<Explanation> out;
  auto has = [&](const std::string& k) { return s.config.contains(k); };
  const FitParams f = fit_params_of(s);  // what the scene records, each key with its one default
  const Shape& sh = p.shape;
  const double tol = f.tolerance_px, merge_tol = f.merge_tolerance_px;
  if (has("fit.tolerance_px") && p.fit_max_px > tol * (1 + 1e-9) && merge_tol > tol) {
    out.push_back({"fit.merge_tolerance_px", "largest distance of a source point from the primitive (fit_max_px)",
                   fmt::format("merged for the robot (fit.merge_width_ratio): every source point lies within {:.2f} px, "
                               "beyond the fit's tolerance {:.2f} px but under the merge tolerance {:.2f} px",
                               p.fit_max_px, tol, merge_tol),
                   fmt::format("a merge tolerance below {:.2f} px would have kept its parts apart", p.fit_max_px),
                   p.fit_max_px, round3(p.fit_max_px)});
  } else if (has("fit.tolerance_px")) {
    out.push_back({"fit.tolerance_px", "largest distance of a source point from the primitive (fit_max_px)",
                   fmt::format("every source point lies within {:.2f} px, under the tolerance {:.2f} px, so one {} "
                               "covers them", p.fit_max_px, tol, prim_type_name(sh.type)),
                   fmt::format("a tolerance below {:.2f} px would have split or replaced {}", p.fit_max_px, p.id),
                   p.fit_max_px, round3(p.fit_max_px)});
  }
  if (sh.type == PrimType::arc && has("fit.max_sweep_deg")) {
    double sweep = std::abs(rad2deg(sh.sweep_rad())), mx = f.max_sweep_deg;
    out.push_back({"fit.max_sweep_deg", "sweep of the arc in degrees",
                   fmt::format("the arc sweeps {:.1f}°, within the {:.0f}° an arc may span", sweep, mx),
                   fmt::format("a limit below {:.1f}° would have split this arc in two", sweep), sweep, round3(sweep)});
  }
  if (sh.type == PrimType::arc && has("fit.min_arc_sagitta_px")) {
    double sag = std::abs(sh.bulge) * dist(sh.p0, sh.p1) / 2, mn = f.min_arc_sagitta_px;
    out.push_back({"fit.min_arc_sagitta_px", "sagitta (bow) of the arc in px",
                   fmt::format("its sagitta {:.2f} px exceeds the {:.2f} px below which an arc counts as a line", sag, mn),
                   fmt::format("a minimum above {:.2f} px would have made it a line", sag), sag, round3(sag)});
  }
  if (sh.type == PrimType::line && has("fit.min_arc_sagitta_px")) {
    Polyline src = source_points(s, p);
    double bow = 0;
    for (Vec2 q : src) bow = std::max(bow, point_segment_distance(q, sh.p0, sh.p1));
    double mn = f.min_arc_sagitta_px;
    out.push_back({"fit.min_arc_sagitta_px", "largest bow of the source points off the chord, px",
                   fmt::format("the source bows at most {:.2f} px off the chord ({} than the {:.2f} px an arc needs)", bow,
                               bow < mn ? "less" : "no less", mn),
                   bow < mn ? fmt::format("a minimum below {:.2f} px would have let an arc compete", bow)
                            : "a line fitted within tolerance and lines are preferred (fit.arc_cost)",
                   bow, bow < mn ? json(round3(bow)) : json(nullptr)});
  }
  if (sh.type == PrimType::circle && has("fit.circle_max_aspect")) {
    Polyline src = source_points(s, p);
    BBox b;
    for (Vec2 q : src) b.add(q);
    double aspect = b.empty() || std::min(b.width(), b.height()) <= 0 ? 1
                  : std::max(b.width(), b.height()) / std::min(b.width(), b.height());
    double mx = f.circle_max_aspect;
    out.push_back({"fit.circle_max_aspect", "aspect ratio of the closed source loop's bounding box",
                   fmt::format("the loop's aspect {:.2f} is within {:.2f}, so it may be one circle", aspect, mx),
                   fmt::format("a limit below {:.2f} would have fitted it as arcs", aspect), aspect, round3(aspect)});
  }
  if (sh.type == PrimType::circle && !p.more_sources.empty() && has("fit.circle_cycle_edges")) {
    double n = static_cast<double>(p.more_sources.size() + 1), mx = f.circle_cycle_edges;
    out.push_back({"fit.circle_cycle_edges", "edges of the graph's cycle (through junctions) fitted as this circle",
                   fmt::format("a cycle of {:.0f} edges, within the {:.0f} a circle may join, lies within tolerance of it", n, mx),
                   fmt::format("a limit below {:.0f} would have left its edges as arcs", n), n, n - 1});
  }
  if (sh.type == PrimType::circle && s.primitives && has("graph.circle_touch_px")) {
    // The nearest other circle, by the gap between the two (beside each other, or one inside the
    // other): touching ones share ink that the skeleton cut them at.
    const double limit = config_value(s, "graph.circle_touch_px", 0), sw = stroke_width_of(s);
    const Primitive* nearest = nullptr;
    double gap = INFINITY;
    for (const Primitive& q : *s.primitives) {
      if (q.id == p.id || q.shape.type != PrimType::circle) continue;
      const double d = dist(sh.center, q.shape.center);
      double g = std::abs(d - (sh.radius + q.shape.radius));
      if (d >= sw) g = std::min(g, std::abs(d - std::abs(sh.radius - q.shape.radius)));
      if (g < gap) gap = g, nearest = &q;
    }
    if (nearest && gap <= std::max(2 * limit, sw))
      out.push_back({"graph.circle_touch_px", fmt::format("gap between this circle and {} (beside it or inside it), px", nearest->id),
                     gap <= limit ? fmt::format("it touches {} (gap {:.2f} px, within {:.2f} px): each was fitted as one circle "
                                                "through the contact", nearest->id, gap, limit)
                                  : fmt::format("it comes within {:.2f} px of {}, farther than the {:.2f} px at which touching "
                                                "circles are kept whole", gap, nearest->id, limit),
                     gap <= limit ? fmt::format("a limit below {:.2f} px would have left the shared ink to cut both into arcs "
                                                "and lines", gap)
                                  : fmt::format("a limit above {:.2f} px would have resolved the two as touching", gap),
                     gap, round3(gap)});
  }
  if (const MarkRecord* m = mark_of(s, p)) explain_mark(s, *m, out);
  if (const Vertex* v = vertex_at(s, p, [](const Vertex& v) { return v.tangent.has_value(); }))
    explain_tangent(s, *v, out);
  if (const Vertex* v = vertex_at(s, p, [](const Vertex& v) { return v.meeting_link_px > 0; });
      v && has("graph.meeting_merge_px")) {
    const double len = v->meeting_link_px, limit = config_value(s, "graph.meeting_merge_px", 0);
    out.push_back({"graph.meeting_merge_px",
                   fmt::format("length of the shared ink between the two junctions merged into {}, px", v->id),
                   fmt::format("{} on it is one junction made of two 3-way junctions {:.2f} px apart (under {:.2f} "
                               "px) whose other arms' lines meet at one point", v->id, len, limit),
                   fmt::format("a limit at or below {:.2f} px would have kept them two junctions", len), len, round3(len)});
  }
  if (has("fit.corner_angle_deg") && sh.type != PrimType::circle) {
    double defl = joint_deflection_deg(s, p), ca = f.corner_angle_deg;
    if (defl > 0)
      out.push_back({"fit.corner_angle_deg", "sharpest turn at a joint with the next piece of its edge, degrees",
                     defl >= ca ? fmt::format("a {:.1f}° turn at its end is a corner (≥ {:.0f}°), where the edge was split", defl, ca)
                                : fmt::format("its joints turn {:.1f}°, under the {:.0f}° of a corner: split for tolerance, not at a corner", defl, ca),
                     defl >= ca ? fmt::format("a corner angle above {:.1f}° would not force a split there", defl)
                                : fmt::format("a corner angle below {:.1f}° would make that joint a corner", defl),
                     defl, round3(defl)});
  }
  if (has("fit.dot_length_px") && sh.length() <= 2 * f.dot_length_px) {
    double len = sh.length(), dl = f.dot_length_px;
    out.push_back({"fit.dot_length_px", "length of the primitive, px",
                   len <= dl ? fmt::format("{:.2f} px is no longer than a dot ({:.2f} px): drawn as a dot", len, dl)
                             : fmt::format("{:.2f} px is longer than a dot ({:.2f} px)", len, dl),
                   fmt::format("a dot length across {:.2f} px flips it", len), len, round3(len)});
  }
  return out;
}

struct ExplainRequest : RegionRequest {
  std::optional<std::string> primitive_id;  // none: explain the region
};

ToolResult explain_threshold(const ToolContext& ctx, const ExplainRequest& req) {
  ToolResult r;
  const Scene& s = ctx.scene;
  Scope scope = scope_of_regions(s, {req.region});
  json list = json::array(), subject;
  std::string text;
  if (s.config.empty()) r.warnings.push_back("the scene records no thresholds (its stages predate config provenance)");
  if (req.primitive_id) {
    const Primitive& p = primitive_or_throw(s, *req.primitive_id);
    subject = {{"kind", "primitive"}, {"primitive_ids", {p.id}}, {"location", point_json(shape_mid(p.shape))}};
    for (const auto& e : explain_primitive(s, p)) {
      list.push_back(explanation_json(s, e));
      text += fmt::format("{}={} ({}): {}; {}\n", e.key, s.config[e.key].value("value", json()).dump(),
                          s.config[e.key].value("from", "default"), e.outcome, e.counterfactual);
    }
    text = fmt::format("{} ({}) was decided by {} threshold(s):\n", p.id, prim_type_name(p.shape.type), list.size()) + text;
  } else if (!scope.everything()) {
    // A region: was ink lost there, and by which stage?
    Drawing d = drawing_of(s);
    const double sw = stroke_width_of(s);
    CoverageReport cov = analyze_coverage(s, d, fidelity_reference(ctx, s, r.warnings).paths, default_tolerance(sw), scope, true);
    double missed = 0;
    for (const auto& f : cov.findings)
      if (f.kind == "missed_ink") missed += f.length_px;
    bool graph_here = s.graph && std::any_of(s.graph->edges.begin(), s.graph->edges.end(),
                                             [&](const Edge& e) { return scope.touches(e.points); });
    // Ink with no graph edge was lost by the skeleton or graph stage, else by the fit.
    const std::vector<std::string> stages = graph_here ? std::vector<std::string>{"fit."}
                                                       : std::vector<std::string>{"skeleton.", "graph."};
    subject = {{"kind", "region"}, {"region", rect_json(scope.bounds())}, {"missed_length_px", round3(missed)},
               {"stage", graph_here ? "fit" : "skeleton/graph"}};
    text = fmt::format("{}: {:.1f} px of centreline missed; {}\n", scope.describe(), missed,
                       graph_here ? "the stroke graph has ink here, so the fit stage decided"
                                  : "the stroke graph has no edge here, so the skeleton or graph stage dropped it");
    if (s.primitives)
      for (const auto& p : *s.primitives)
        if (scope.touches(p))
          for (const auto& e : explain_primitive(s, p)) {
            json j = explanation_json(s, e);
            j["primitive_id"] = p.id;
            list.push_back(j);
          }
    for (auto it = s.config.begin(); it != s.config.end(); ++it)
      if (!graph_here && std::any_of(stages.begin(), stages.end(), [&](const std::string& st) { return it.key().rfind(st, 0) == 0; })) {
        json j = {{"key", it.key()}, {"value", it.value().value("value", json())},
                  {"from", it.value().value("from", "default")},
                  {"measured", round3(missed)}, {"measured_what", "missed centreline length in the region, px"},
                  {"outcome", "a threshold of the stage that produced no edge here"},
                  {"would_change_at", nullptr}, {"counterfactual", "rerun the stage with this key overridden (RerunStage)"}};
        j.update(declared_doc(it.key(), it.value()));
        list.push_back(j);
        text += fmt::format("{}={} ({})\n", it.key(), it.value().value("value", json()).dump(), it.value().value("from", "default"));
      }
    for (const auto& j : list)
      if (j.contains("primitive_id"))
        text += fmt::format("{} {}={}: {}\n", j["primitive_id"].get<std::string>(), j["key"].get<std::string>(),
                            j["value"].dump(), j["counterfactual"].get<std::string>());
  } else {
    throw Error(Code::invalid_selection, "ExplainThreshold needs primitive_id or region");
  }
  r.fields = {{"relevant_thresholds", list}, {"subject", subject}};
  r.llm_text = text;
  // The subject on the source, each measured threshold beside it.
  BBox focus = scope.bounds();
  const Primitive* subject_p = req.primitive_id ? s.primitive(*req.primitive_id) : nullptr;
  if (subject_p)
    for (Vec2 q : shape_samples(subject_p->shape)) focus.add(q);
  View v = crop_view(ctx, s, focus, 4 * stroke_width_of(s), subject_p ? subject_p->id + " and its thresholds" : "region and its thresholds", 480);
  if (s.primitives)
    for (const auto& p : *s.primitives) v.shape(p.shape, subject_p && p.id == subject_p->id ? color::highlight : color::faded, 2);
  if (!subject_p) v.box(focus, color::highlight, 1);
  for (const auto& j : list)
    v.note(fmt::format("{} = {} ({}): measured {:g}{}", j["key"].get<std::string>(), j["value"].dump(), j["from"].get<std::string>(),
                       j["measured"].get<double>(), j["would_change_at"].is_null() ? "" : ", flips at " + j["would_change_at"].dump()));
  r.images["explanation"] = v.finish();
  return r;
}

Tool explain_threshold_entry() {
  using R = ExplainRequest;
  return typed_tool<R>(
      8, "ExplainThreshold", "inspection",
      "Which thresholds decided a primitive (or lost the ink of a region): value, provenance, the measured "
      "quantity, and the value at which the outcome would have changed.",
      {{field("primitive_id", &R::primitive_id, S::nullable(S::id("the primitive to explain"))),
        field<R, json>("region", &R::region, S::region("a region"))}},
      S::object({{"relevant_thresholds", S::array(S::object({{"key", S::string("stage.name")}, {"value", S::any("its value")},
                                                             {"from", S::string("default, stroke_width or user")},
                                                             {"doc", S::string("what it decides")}, {"unit", S::string("its unit")},
                                                             {"measured", S::number("the quantity measured against it")},
                                                             {"measured_what", S::string("what that quantity is")},
                                                             {"outcome", S::string("what the threshold decided")},
                                                             {"would_change_at", S::nullable(S::number("the value that would change the outcome"))},
                                                             {"counterfactual", S::string("what would happen then")},
                                                             {"primitive_id", S::string("the primitive it decided")}},
                                                            {"key", "value", "from", "measured", "outcome", "would_change_at"},
                                                            "one threshold"), "the thresholds that decided it")},
                 {"subject", S::any("what was explained: a primitive or a region, with its location")}},
                {"relevant_thresholds", "subject"}),
      explain_threshold);
}

}  // namespace

// The entries defined above, each after its handler (the catalog number, not this list, orders them).
void add_inspection_tools(std::vector<Tool>& out) {
  for (auto entry : {get_source_image_entry, get_current_render_entry, list_primitives_entry, get_primitive_entry,
                     get_graph_entry, get_tour_entry, get_config_entry, explain_threshold_entry})
    out.push_back(entry());
}

}  // namespace sv
