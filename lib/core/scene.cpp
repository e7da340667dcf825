#include "core/scene.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/scene_check.hpp"
#include "core/schema.hpp"

namespace sv {

const char* joint_name(Primitive::Joint j) {
  return j == Primitive::Joint::smooth ? "smooth" : j == Primitive::Joint::corner ? "corner" : "none";
}

double round_to(double v, double quantum) {
  if (!std::isfinite(v)) return v;
  // Dividing by the integer 1/quantum gives the double nearest the decimal (255.5714, not
  // 255.57139999999998), so the text is short and stable.
  const double inv = std::round(1.0 / quantum);
  double r = std::round(v * inv) / inv;
  // Normalise -0 so equal scenes serialize equally.
  return r == 0 ? 0.0 : r;
}

namespace {

constexpr double kPx = 1e-4;   // coordinates, lengths, angles in degrees
constexpr double kTime = 1e-6; // seconds
// A circle's entry angle, degrees: finer, as routing emits from the angle recorded here (a step
// of 1e-4 degrees moved the pen's path enough to add a turn), so a tour read back draws the
// same stream.
constexpr double kEntryDeg = 1e-12;

json pt(Vec2 p) { return json::array({round_to(p.x, kPx), round_to(p.y, kPx)}); }
Vec2 pt_from(const json& j) { return {j.at(0).get<double>(), j.at(1).get<double>()}; }

// Free-form sections (config, relations, regions, simulation, metrics) hold computed
// numbers too; rounding them the same way keeps the serialization canonical and compact. In
// place and with an explicit stack: copying each subtree per level was quadratic in the nesting,
// and recursion would let the input choose the stack depth.
json rounded_json(json j) {
  std::vector<json*> todo{&j};
  while (!todo.empty()) {
    json* v = todo.back();
    todo.pop_back();
    if (v->is_number_float()) *v = round_to(v->get<double>(), 1e-6);
    else if (v->is_structured())
      for (auto& child : *v) todo.push_back(&child);
  }
  return j;
}

Shape rounded(const Shape& s) {
  switch (s.type) {
    case PrimType::line: return Shape::line({round_to(s.p0.x, kPx), round_to(s.p0.y, kPx)},
                                            {round_to(s.p1.x, kPx), round_to(s.p1.y, kPx)});
    case PrimType::arc: return Shape::arc({round_to(s.p0.x, kPx), round_to(s.p0.y, kPx)},
                                          {round_to(s.p1.x, kPx), round_to(s.p1.y, kPx)}, round_to(s.bulge, 1e-6));
    case PrimType::circle: return Shape::circle({round_to(s.center.x, kPx), round_to(s.center.y, kPx)},
                                                round_to(s.radius, kPx));
  }
  return s;
}

}  // namespace

void set_config(Scene& s, const std::string& key, double value, const std::string& from,
                const std::string& doc) {
  s.config[key] = {{"value", round_to(value, kPx)}, {"from", from}, {"doc", doc}};
}

double config_value(const Scene& s, const std::string& key, double fallback) {
  auto it = s.config.find(key);
  if (it == s.config.end() || !it->contains("value") || !(*it)["value"].is_number()) return fallback;
  return (*it)["value"].get<double>();
}

json to_json(const Scene& s, bool with_revision_id) {
  json j = s.extra;
  j["format"] = kSceneFormat;
  j["version"] = kSceneVersion;
  if (s.source) {
    const auto& src = *s.source;
    j["source"] = {{"path", src.path},
                   {"sha256", src.sha256},
                   {"width_px", src.width},
                   {"height_px", src.height},
                   {"stroke_width_px", round_to(src.stroke_width_px, kPx)}};
  }
  if (!s.config.empty()) j["config"] = rounded_json(s.config);
  if (s.graph) {
    json vs = json::array(), es = json::array();
    for (const auto& v : s.graph->vertices) {
      vs.push_back({{"id", v.id}, {"x", round_to(v.p.x, kPx)}, {"y", round_to(v.p.y, kPx)},
                    {"degree", v.degree}, {"kind", v.kind}});
      if (v.meeting_link_px > 0) vs.back()["meeting_link_px"] = round_to(v.meeting_link_px, kPx);
      if (v.tangent)
        vs.back()["tangent"] = {{"on", v.tangent->arc ? "arc" : "circle"}, {"stems", v.tangent->stems},
                                {"meet_deg", round_to(v.tangent->meet_deg, kPx)},
                                {"line_gap_px", round_to(v.tangent->line_gap_px, kPx)},
                                {"circle_off_px", round_to(v.tangent->circle_off_px, kPx)}};
    }
    for (const auto& e : s.graph->edges) {
      json pts = json::array();
      for (auto p : e.points) pts.push_back(pt(p));
      es.push_back({{"id", e.id}, {"v0", e.v0}, {"v1", e.v1}, {"points", std::move(pts)},
                    {"closed", e.closed}, {"width_px", round_to(e.width_px, kPx)}});
      if (e.filled) es.back()["filled"] = true;
      if (e.mark) {
        json m = {{"found_as", e.mark->loop ? "loop" : "filled"}, {"drawn_as", e.mark->drawn_as},
                  {"diameter_px", round_to(e.mark->diameter_px, kPx)}};
        if (e.mark->loop) m["unreached"] = round_to(e.mark->unreached, kPx), m["flip_reach_px"] = round_to(e.mark->flip_reach_px, kPx);
        es.back()["mark"] = std::move(m);
      }
    }
    j["graph"] = {{"vertices", std::move(vs)}, {"edges", std::move(es)}};
  }
  if (s.primitives) {
    json ps = json::array();
    for (const auto& p : *s.primitives) {
      json o = {{"id", p.id}, {"type", prim_type_name(p.shape.type)}};
      // Derived values come from the rounded defining values, so that parsing and writing
      // again gives the same bytes (and the same revision id).
      const Shape sh = rounded(p.shape);
      if (sh.type != PrimType::circle) {
        o["p0"] = pt(sh.p0);
        o["p1"] = pt(sh.p1);
      }
      if (sh.type == PrimType::arc) {
        o["bulge"] = sh.bulge;
        if (std::isfinite(sh.radius)) {
          o["center"] = pt(sh.center);
          o["radius"] = round_to(sh.radius, kPx);
        }
      }
      if (sh.type == PrimType::circle) {
        o["center"] = pt(sh.center);
        o["radius"] = sh.radius;
      }
      o["length_px"] = round_to(sh.length(), kPx);
      if (!p.edge.empty()) {
        o["edge"] = p.edge;
        o["span"] = {p.span0, p.span1};
        if (!p.more_sources.empty()) {
          json es = json::array();
          es.push_back({{"edge", p.edge}, {"span", {p.span0, p.span1}}});
          for (const auto& src : p.more_sources) es.push_back({{"edge", src.edge}, {"span", {src.span0, src.span1}}});
          o["edges"] = std::move(es);
        }
      }
      o["fit_rms_px"] = round_to(p.fit_rms_px, kPx);
      o["fit_max_px"] = round_to(p.fit_max_px, kPx);
      o["semantic_role"] = p.semantic_role;
      o["issues"] = p.issues;
      if (p.route_deviation_px) o["route_deviation_px"] = round_to(*p.route_deviation_px, kPx);
      if (p.joint_start != Primitive::Joint::none) o["joint_start"] = joint_name(p.joint_start);
      if (p.joint_end != Primitive::Joint::none) o["joint_end"] = joint_name(p.joint_end);
      ps.push_back(std::move(o));
    }
    j["primitives"] = std::move(ps);
  }
  if (!s.relations.empty()) j["relations"] = rounded_json(s.relations);
  if (!s.regions.empty()) j["regions"] = rounded_json(s.regions);
  if (s.tour) {
    json t = json::array();
    for (const auto& st : *s.tour) {
      json o = {{"primitive", st.primitive}, {"direction", st.reverse ? "reverse" : "forward"}};
      if (st.entry_deg != 0) o["entry_deg"] = round_to(st.entry_deg, kEntryDeg);
      if (!st.whole()) {
        o["t0"] = round_to(st.t0, kTime);
        o["t1"] = round_to(st.t1, kTime);
      }
      t.push_back(std::move(o));
    }
    j["tour"] = std::move(t);
  }
  if (s.robot) {
    const auto& r = *s.robot;
    j["robot"] = {{"model", r.model},
                  {"ppi", round_to(r.ppi, kPx)},
                  {"footprint_mm", round_to(r.footprint_mm, kPx)},
                  {"pen_time_s", round_to(r.pen_time_s, kTime)},
                  {"start", {{"x", round_to(r.start.x, kPx)},
                             {"y", round_to(r.start.y, kPx)},
                             {"heading_deg", round_to(r.start.heading_deg, kPx)}}},
                  {"start_mode", r.start_fixed ? "fixed" : "free"}};
    if (r.plotter()) {
      j["robot"]["draw_speed_mm_s"] = round_to(r.draw_speed_mm_s, kPx);
      j["robot"]["travel_speed_mm_s"] = round_to(r.travel_speed_mm_s, kPx);
      j["robot"]["accel_mm_s2"] = round_to(r.accel_mm_s2, kPx);
    }
  }
  if (s.commands) {
    json cs = json::array();
    for (const auto& c : *s.commands) {
      json o;
      switch (c.kind) {
        case Command::Kind::line:
          o = {{"kind", "line"}, {"distance", round_to(c.distance, kPx)}, {"penDown", c.pen_down}};
          break;
        case Command::Kind::spin:
          o = {{"kind", "spin"}, {"degrees", round_to(c.degrees, kPx)}};
          break;
        case Command::Kind::arc:
          o = {{"kind", "arc"}, {"radius", round_to(c.radius, kPx)}, {"degrees", round_to(c.degrees, kPx)}};
          if (!c.pen_down) o["penDown"] = false;  // a drawn arc says nothing, as the scorer reads it
          break;
      }
      if (!c.primitive.empty()) o["primitive"] = c.primitive;
      cs.push_back(std::move(o));
    }
    j["commands"] = std::move(cs);
  }
  if (!s.metrics.is_null()) j["metrics"] = rounded_json(s.metrics);
  if (!s.warnings.empty()) j["warnings"] = s.warnings;
  json rev = {{"tool", s.revision.tool}, {"args", s.revision.args}, {"note", s.revision.note}};
  rev["parent"] = s.revision.parent.empty() ? json(nullptr) : json(s.revision.parent);
  if (with_revision_id && !s.revision.id.empty()) rev["id"] = s.revision.id;
  j["revision"] = std::move(rev);
  return j;
}

Scene scene_from_valid_json(const json& j);

std::optional<SimStep::Op> sim_op_named(const std::string& name) {
  for (auto op : {SimStep::Op::line, SimStep::Op::spin, SimStep::Op::arc, SimStep::Op::pen_up, SimStep::Op::pen_down})
    if (name == sim_op_name(op)) return op;
  return std::nullopt;
}

// A simulation as written ([command, op, duration_s, x, y, heading_deg] records), or as scenes
// stored before that held it (one object a step, its end pose, notes and trace inside).
// A trace is null for a pen change.
Simulation simulation_from(const json& o, size_t commands) {
  Simulation sim;
  sim.total_s = o["total_s"];
  sim.motion_time_s = o["motion_time_s"];
  sim.pen_time_s = o["pen_time_s"];
  sim.ppi = o["ppi"];
  const json& steps = o["steps"];
  sim.steps.reserve(steps.size());
  json traces = json::array();
  for (const json& st : steps) {
    const bool record = st.is_array();
    const json& op = record ? st[1] : st["op"];
    const json& end = record ? st : st["end"];
    const size_t at = record ? 3 : 0;
    SimStep step;
    step.op = *sim_op_named(op);  // the schema names the five
    const size_t command = record ? st[0].get<size_t>() : st["command"].get<size_t>();
    if (command >= commands)
      throw Error(Code::invalid_scene, fmt::format("simulation: step {} names command {} of {}", sim.steps.size(),
                                                   command, commands));
    step.command = static_cast<uint32_t>(command);
    step.duration_s = record ? st[2] : st["duration_s"];
    step.end = {end[at].get<double>(), end[at + 1].get<double>(), end[at + 2].get<double>()};
    if (!record) {
      for (const json& n : st["notes"]) sim.notes.emplace_back(sim.steps.size(), n.get<std::string>());
      traces.push_back(st.contains("trace") ? st["trace"] : json(nullptr));
    }
    sim.steps.push_back(step);
  }
  if (std::any_of(traces.begin(), traces.end(), [](const json& t) { return !t.is_null(); })) sim.traces = std::move(traces);
  if (o.contains("notes"))
    for (const json& n : o["notes"]) sim.notes.emplace_back(n[0].get<size_t>(), n[1].get<std::string>());
  if (o.contains("traces")) sim.traces = o["traces"];
  for (const auto& [step, text] : sim.notes)
    if (step >= sim.steps.size())
      throw Error(Code::invalid_scene, fmt::format("simulation: a note on step {} of {}", step, sim.steps.size()));
  if (!sim.traces.is_null() && sim.traces.size() != sim.steps.size())
    throw Error(Code::invalid_scene, fmt::format("simulation: {} traces for {} steps", sim.traces.size(), sim.steps.size()));
  return sim;
}

namespace {

// Ids name things across sections; a name that is not unique or names nothing would be drawn
// twice or dropped without a word by the tools, so the reader refuses it.
void check_references(const Scene& s) {
  std::unordered_set<std::string> prims;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (!prims.insert(p.id).second)
        throw Error(Code::invalid_scene, fmt::format("primitive id {} is used more than once", p.id), {{"id", p.id}});
  if (s.tour)
    for (size_t i = 0; i < s.tour->size(); ++i)
      if (const std::string& id = (*s.tour)[i].primitive; !prims.count(id))
        throw Error(Code::invalid_scene, fmt::format("tour/{} names primitive {}, which the scene does not have", i, id),
                    {{"id", id}});
  if (s.graph) {
    std::unordered_set<std::string> vertices;
    for (const auto& v : s.graph->vertices) vertices.insert(v.id);
    for (const auto& e : s.graph->edges)
      for (const std::string* v : {&e.v0, &e.v1})
        if (!vertices.count(*v))
          throw Error(Code::invalid_scene, fmt::format("edge {} names vertex {}, which the graph does not have", e.id, *v),
                      {{"id", *v}});
  }
}

}  // namespace

Scene scene_from_json(const json& j) {
  if (!j.is_object()) throw Error(Code::invalid_scene, "scene: expected a JSON object");
  if (!j.contains("format") || j["format"] != kSceneFormat)
    throw Error(Code::invalid_scene, "scene: \"format\" must be \"sv.scene\"");
  if (!j.contains("version") || !j["version"].is_number_integer())
    throw Error(Code::invalid_scene, "scene: \"version\" must be an integer");
  int version = j["version"].get<int>();
  if (version != kSceneVersion)
    throw Error(Code::unsupported_version,
                fmt::format("scene version {} is not supported (this sv reads version {})", version,
                            kSceneVersion),
                {{"version", version}, {"supported", kSceneVersion}});
  if (std::string err = scene_schema().first_error(j); !err.empty())
    throw Error(Code::invalid_scene, "scene: " + err, {{"path", err.substr(0, err.find(':'))}});

  try {
    return scene_from_valid_json(j);
  } catch (const json::exception& e) {
    throw Error(Code::invalid_scene, fmt::format("scene: {}", e.what()));
  }
}

// Converts a document that passed the schema; the schema cannot say everything (finite
// numbers, per-type keys), so the remaining checks are here.
Scene scene_from_valid_json(const json& j) {
  Scene s;
  static const std::vector<std::string> known = {
      "format", "version", "source", "config", "graph", "primitives", "relations", "regions",
      "tour", "robot", "commands", "simulation", "metrics", "warnings", "revision"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) s.extra[it.key()] = it.value();

  if (j.contains("source")) {
    const auto& o = j["source"];
    s.source = Source{o["path"], o["sha256"], o["width_px"], o["height_px"], o["stroke_width_px"]};
  }
  if (j.contains("config")) s.config = j["config"];
  if (j.contains("graph")) {
    Graph g;
    for (const auto& v : j["graph"]["vertices"]) {
      g.vertices.push_back({v["id"], {v["x"].get<double>(), v["y"].get<double>()}, v["degree"], v["kind"],
                            v.value("meeting_link_px", 0.0), {}});
      if (v.contains("tangent")) {
        const json& t = v["tangent"];
        g.vertices.back().tangent = TangentRecord{t["on"] == "arc", t["stems"], t["meet_deg"], t["line_gap_px"],
                                                  t["circle_off_px"]};
      }
    }
    for (const auto& e : j["graph"]["edges"]) {
      Edge ed{e["id"], e["v0"], e["v1"], {}, e["closed"], e.value("width_px", 0.0), e.value("filled", false), {}};
      if (e.contains("mark")) {
        const json& m = e["mark"];
        ed.mark = MarkRecord{m["found_as"] == "loop", m["drawn_as"], m["diameter_px"], m.value("unreached", 0.0),
                             m.value("flip_reach_px", 0.0)};
      }
      for (const auto& p : e["points"]) ed.points.push_back(pt_from(p));
      g.edges.push_back(std::move(ed));
    }
    s.graph = std::move(g);
  }
  if (j.contains("primitives")) {
    std::vector<Primitive> ps;
    for (const auto& o : j["primitives"]) {
      Primitive p;
      p.id = o["id"];
      PrimType t = prim_type_from(o["type"]);
      auto need = [&](const char* k) -> const json& {
        if (!o.contains(k))
          throw Error(Code::invalid_scene, fmt::format("primitive {}: {} needs '{}'", p.id, prim_type_name(t), k));
        return o[k];
      };
      if (t == PrimType::line) p.shape = Shape::line(pt_from(need("p0")), pt_from(need("p1")));
      if (t == PrimType::arc) p.shape = Shape::arc(pt_from(need("p0")), pt_from(need("p1")), need("bulge"));
      if (t == PrimType::circle) p.shape = Shape::circle(pt_from(need("center")), need("radius"));
      p.edge = o.value("edge", std::string());
      if (o.contains("span")) {
        p.span0 = o["span"][0];
        p.span1 = o["span"][1];
      }
      if (o.contains("edges"))
        for (size_t k = 1; k < o["edges"].size(); ++k) {
          const json& src = o["edges"][k];
          p.more_sources.push_back({src["edge"], src["span"][0], src["span"][1]});
        }
      p.fit_rms_px = o.value("fit_rms_px", 0.0);
      p.fit_max_px = o.value("fit_max_px", 0.0);
      p.semantic_role = o.value("semantic_role", std::string("unknown"));
      if (o.contains("issues")) p.issues = o["issues"].get<std::vector<std::string>>();
      if (o.contains("route_deviation_px")) p.route_deviation_px = o["route_deviation_px"].get<double>();
      auto joint = [](const std::string& name) {
        return name == "smooth" ? Primitive::Joint::smooth : Primitive::Joint::corner;
      };
      if (o.contains("joint_start")) p.joint_start = joint(o["joint_start"]);
      if (o.contains("joint_end")) p.joint_end = joint(o["joint_end"]);
      ps.push_back(std::move(p));
    }
    s.primitives = std::move(ps);
  }
  if (j.contains("relations")) s.relations = j["relations"];
  if (j.contains("regions")) s.regions = j["regions"];
  if (j.contains("tour")) {
    std::vector<TourStep> t;
    for (const auto& o : j["tour"])
      t.push_back({o["primitive"], o["direction"] == "reverse", o.value("entry_deg", 0.0), o.value("t0", 0.0),
                   o.value("t1", 1.0)});
    s.tour = std::move(t);
  }
  if (j.contains("robot")) {
    const auto& o = j["robot"];
    Robot r;
    r.model = o["model"];
    r.ppi = o.value("ppi", 0.0);
    r.footprint_mm = o.value("footprint_mm", kDefaultFootprintMm);
    r.pen_time_s = o.value("pen_time_s", 0.0);
    r.start = {o["start"]["x"], o["start"]["y"], o["start"]["heading_deg"]};
    r.start_fixed = o.value("start_mode", "free") == "fixed";
    r.draw_speed_mm_s = o.value("draw_speed_mm_s", kDefaultPlotterDrawMmS);
    r.travel_speed_mm_s = o.value("travel_speed_mm_s", kDefaultPlotterTravelMmS);
    r.accel_mm_s2 = o.value("accel_mm_s2", kDefaultPlotterAccelMmS2);
    s.robot = r;
  }
  if (j.contains("commands")) {
    std::vector<Command> cs;
    size_t i = 0;
    for (const auto& o : j["commands"]) {
      Command c;
      std::string k = o["kind"];
      auto num = [&](const char* key) {
        if (!o.contains(key) || !o[key].is_number())
          throw Error(Code::invalid_scene, fmt::format("commands/{}: {} needs a number '{}'", i, k, key));
        return o[key].get<double>();
      };
      if (k == "line") {
        c.kind = Command::Kind::line;
        c.distance = num("distance");
        c.pen_down = o.value("penDown", true);
      } else if (k == "spin") {
        c.kind = Command::Kind::spin;
        c.degrees = num("degrees");
      } else {
        c.kind = Command::Kind::arc;
        c.radius = num("radius");
        c.degrees = num("degrees");
        c.pen_down = o.value("penDown", true);
      }
      c.primitive = o.value("primitive", std::string());
      cs.push_back(std::move(c));
      ++i;
    }
    s.commands = std::move(cs);
  }
  if (j.contains("simulation")) s.simulation = simulation_from(j["simulation"], s.commands ? s.commands->size() : 0);
  if (j.contains("metrics")) s.metrics = j["metrics"];
  if (j.contains("warnings")) s.warnings = j["warnings"].get<std::vector<std::string>>();
  if (j.contains("revision")) {
    const auto& r = j["revision"];
    s.revision.id = r.value("id", std::string());
    s.revision.parent = r.contains("parent") && r["parent"].is_string() ? r["parent"].get<std::string>() : "";
    s.revision.tool = r.value("tool", std::string());
    s.revision.args = r.value("args", json::array());
    s.revision.note = r.value("note", std::string());
  }
  // The schema checks types, not sizes.
  if (std::string why = check_scene_extent(s); !why.empty()) throw Error(Code::invalid_scene, why);
  check_references(s);
  return s;
}

namespace {

// Builds the document as the text is read and refuses it at the first limit it passes: a
// container nested too deep (nlohmann's copy and dump recurse), a string or key too long, a
// container too large. One pass, so a hostile document costs no more than reading it up to its
// offence (nlohmann's callback parser, which could check the same, rescans the enclosing
// container at the end of every object, which makes an array of n objects cost n^2).
class LimitedBuilder {
 public:
  using string_t = json::string_t;
  LimitedBuilder(json& out, Code code, const std::string& what) : dom_(out), code_(code), what_(what) {}
  bool null() { return item() && dom_.null(); }
  bool boolean(bool v) { return item() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return item() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return item() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const string_t& s) { return item() && dom_.number_float(v, s); }
  bool string(string_t& v) { return text(v) && item() && dom_.string(v); }
  bool binary(json::binary_t& v) { return item() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open() && dom_.start_object(n); }
  bool key(string_t& k) { return text(k) && dom_.key(k); }  // its value is the item
  bool end_object() { return close() && dom_.end_object(); }
  bool start_array(std::size_t n) { return open() && dom_.start_array(n); }
  bool end_array() { return close() && dom_.end_array(); }
  // Malformed text: the builder throws nlohmann's exception, with the byte it stopped at.
  template <class Exception>
  bool parse_error(std::size_t at, const std::string& token, const Exception& e) {
    return dom_.parse_error(at, token, e);
  }

 private:
  bool item() {
    if (!items_.empty() && ++items_.back() > kMaxJsonArrayItems)
      throw Error(code_, fmt::format("{}: an array or object of more than {} items", what_, kMaxJsonArrayItems));
    return true;
  }
  bool open() {
    if (items_.size() >= static_cast<size_t>(kMaxJsonDepth))
      throw Error(code_, fmt::format("{}: nested deeper than {} levels", what_, kMaxJsonDepth));
    item();
    items_.push_back(0);
    return true;
  }
  bool close() {
    items_.pop_back();
    return true;
  }
  bool text(const std::string& v) const {
    if (v.size() > kMaxJsonStringBytes)
      throw Error(code_, fmt::format("{}: a string longer than {} bytes", what_, kMaxJsonStringBytes));
    return true;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  Code code_;
  const std::string& what_;
  std::vector<size_t> items_;  // per open container, its items (an object's keys) so far
};

}  // namespace

json parse_json_limited(const std::string& text, Code code, const std::string& what) {
  if (text.size() > kMaxSceneBytes)
    throw Error(code, fmt::format("{}: larger than {} bytes", what, kMaxSceneBytes));
  try {
    json doc;
    LimitedBuilder builder(doc, code, what);
    json::sax_parse(text, &builder);
    return doc;
  } catch (const json::parse_error& e) {
    throw Error(code, fmt::format("{}: malformed JSON at byte {}", what, e.byte), {{"byte", e.byte}});
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw Error(code, fmt::format("{}: malformed JSON: {}", what, e.what()));
  }
}

Scene parse_scene(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(Code::invalid_scene, "empty input: expected a scene document");
  return scene_from_json(parse_json_limited(text, Code::invalid_scene, "scene"));
}

namespace {

// The simulation as dump() would write it, appended to `t`: as a tree of JSON values a step took
// about 1 KB, written straight it takes the 50 bytes of its text. Members in key order, numbers
// formatted by the library (rounded as rounded_json rounds).
void append_simulation(std::string& t, const Simulation& sim) {
  auto number = [](double v) { return json(round_to(v, 1e-6)).dump(); };
  t += "{\"motion_time_s\":" + number(sim.motion_time_s);
  if (!sim.notes.empty()) {
    t += ",\"notes\":[";
    for (const auto& [step, text] : sim.notes) t += fmt::format("[{},{}],", step, json(text).dump());
    t.back() = ']';
  }
  t += ",\"pen_time_s\":" + number(sim.pen_time_s) + ",\"ppi\":" + number(sim.ppi) + ",\"steps\":[";
  for (const SimStep& st : sim.steps) {
    t += json::array({st.command, sim_op_name(st.op), round_to(st.duration_s, 1e-6), round_to(st.end.x, 1e-6),
                      round_to(st.end.y, 1e-6), round_to(st.end.heading_deg, 1e-6)})
             .dump();
    t += ',';
  }
  if (t.back() == ',') t.pop_back();
  t += "],\"total_s\":" + number(sim.total_s);
  if (!sim.traces.is_null()) t += ",\"traces\":" + rounded_json(sim.traces).dump();
  t += '}';
}

}  // namespace

std::vector<std::string> primitive_ids(const std::string& list) {
  std::vector<std::string> ids;
  for (size_t a = 0, b; a < list.size(); a = b + 1) {
    b = std::min(list.find(',', a), list.size());
    if (b > a) ids.push_back(list.substr(a, b - a));
  }
  return ids;
}

const char* sim_op_name(SimStep::Op op) {
  static constexpr const char* kNames[] = {"line", "spin", "arc", "pen_up", "pen_down"};
  return kNames[static_cast<int>(op)];
}

SceneMembers scene_members(const Scene& s, const json& doc) {
  SceneMembers m;
  for (auto it = doc.begin(); it != doc.end(); ++it) m.members.emplace_back(it.key(), it.value().dump());
  if (s.simulation) {
    auto at = std::find_if(m.members.begin(), m.members.end(), [](const auto& p) { return p.first > "simulation"; });
    m.members.emplace(at, "simulation", "");
    m.simulation = &*s.simulation;
  }
  return m;
}

std::string join_members(const SceneMembers& m) {
  size_t size = 2;
  for (const auto& [key, value] : m.members) size += key.size() + value.size() + 4;
  // A step's record is about 50 bytes, a note's 30 to 60.
  if (m.simulation) size += 64 * m.simulation->steps.size() + 72 * m.simulation->notes.size() + 256;
  std::string text = "{";
  text.reserve(size + 1);  // and a newline
  for (const auto& [key, value] : m.members) {
    if (text.size() > 1) text += ',';
    text += json(key).dump() + ":";
    if (key == "simulation" && m.simulation) append_simulation(text, *m.simulation);
    else text += value;
  }
  return text + "}";
}

// The members are made from a document that is gone before they are joined.
std::string canonical_bytes(const Scene& s) {
  const auto members = scene_members(s, to_json(s, false));
  return join_members(members);
}

std::string assign_revision_id(Scene& s) {
  s.revision.id = sha256_hex(canonical_bytes(s));
  return s.revision.id;
}

std::string dump_scene(const Scene& s) {
  const auto members = scene_members(s, to_json(s, true));
  return join_members(members) + "\n";
}

double round3(double v) { return round_to(v, 1e-3); }
json point_json(Vec2 p) { return json::array({round3(p.x), round3(p.y)}); }
std::string pt_text(Vec2 p) { return fmt::format("({:.4g},{:.4g})", round_to(p.x, 0.1), round_to(p.y, 0.1)); }

std::string shape_text(const Shape& s) {
  switch (s.type) {
    case PrimType::line: return fmt::format("line {} to {}, {:.1f} px", pt_text(s.p0), pt_text(s.p1), s.length());
    case PrimType::arc:
      return fmt::format("arc {} to {} bulge {:.3f}, {:.1f} px", pt_text(s.p0), pt_text(s.p1), s.bulge, s.length());
    case PrimType::circle: return fmt::format("circle at {} radius {:.1f} px", pt_text(s.center), s.radius);
  }
  return "";
}

const Primitive& primitive_or_throw(const Scene& s, const std::string& id) {
  const Primitive* p = s.primitive(id);
  if (!p) throw Error(Code::not_found, "no primitive " + id, {{"id", id}});
  return *p;
}

namespace {

void append_span(const Scene& s, const std::string& edge, int span0, int span1, Polyline& out) {
  const Edge* e = s.graph->edge(edge);
  if (!e || e->points.empty()) return;
  const int n = static_cast<int>(e->points.size());
  int a = std::clamp(span0, 0, n - 1), b = std::clamp(span1, 0, n - 1);
  if (a <= b) {
    out.insert(out.end(), e->points.begin() + a, e->points.begin() + b + 1);
  } else {  // wraps past the end of a closed edge
    out.insert(out.end(), e->points.begin() + a, e->points.end());
    out.insert(out.end(), e->points.begin(), e->points.begin() + b + 1);
  }
}

}  // namespace

Polyline source_points(const Scene& s, const Primitive& p) {
  if (!s.graph || p.edge.empty()) return {};
  Polyline out;
  append_span(s, p.edge, p.span0, p.span1, out);
  // A primitive fitted across a junction covers runs of several edges.
  for (const auto& src : p.more_sources) append_span(s, src.edge, src.span0, src.span1, out);
  return out;
}

double stroke_width_of(const Scene& s) {
  return s.source && s.source->stroke_width_px > 0 ? s.source->stroke_width_px : 2.0;
}

void drop_downstream_of_fit(Scene& s) {
  s.tour.reset();
  s.robot.reset();
  s.commands.reset();
  drop_downstream_of_route(s);
}

void drop_downstream_of_route(Scene& s) {
  s.simulation.reset();
  s.metrics = nullptr;
}

}  // namespace sv
