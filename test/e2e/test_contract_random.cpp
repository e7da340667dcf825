// The tools tell the truth: random request sequences over every registered tool, valid ones
// drawn from each tool's own request schema and the current scene's ids, invalid ones made by
// breaking a valid one (an unknown field, a wrong type, a value outside an enum, an unknown id).
// Each request runs as the executables run it in store mode, through the library (faster than a
// process per call), and after every step the store must still hold the truth: fsck clean,
// every revision valid, ids never reused, a refusal or a read writing nothing, and an edit's
// before/after equal to EvaluateRevision of its parent and of its child.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>

#include "core/error.hpp"
#include "core/scene.hpp"
#include "core/scene_check.hpp"
#include "process.hpp"
#include "raster/png.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"
#include "tools/edit_session.hpp"
#include "tools/tool.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Five drawings of different families, small enough for hundreds of tool calls: each at a
// scale (half, the hand drawing's wide stroke a third) and the share of its width kept (the
// Hershey line of text is cut to its first glyphs).
struct Sample {
  const char* png;
  double scale, keep;
};
const Sample kDrawings[] = {{"feather_shopping-cart_w5.png", 0.5, 1.0},
                            {"hand_circle-pause_w10.png", 0.35, 1.0},
                            {"hanzi_u5f51.png", 0.5, 1.0},
                            {"hershey_futural_02_w4.png", 0.5, 0.4},
                            {"photo_tabler_math-x-floor-divide-y_w3.png", 0.5, 1.0}};
constexpr int kSequencesPerDrawing = kSanitized ? 12 : 40;
constexpr int kStepsPerSequence = 10;

// A store holding the pipeline's revisions of the drawing, made once per drawing.
fs::path template_store(const Sample& drawing) {
  const std::string png = drawing.png;
  fs::path d = scratch() / ("contract-" + fs::path(png).stem().string());
  fs::create_directories(d);
  cv::Mat full = sv::decode_png(slurp(data(png))), small_img;
  REQUIRE(!full.empty());
  cv::resize(full(cv::Rect(0, 0, static_cast<int>(drawing.keep * full.cols), full.rows)), small_img, {}, drawing.scale,
             drawing.scale, cv::INTER_AREA);
  const fs::path small = d / png;
  spit(small, sv::encode_png_gray(small_img));
  // The source named by its bare name: the revisions, and so the run, do not depend on where
  // the scratch directory is.
  const std::string cd = "cd " + d.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  Run p = run(cd + fmt::format("{} {} | {} | {} | {} >/dev/null", bin("sv-skeleton"), png, bin("sv-fit"),
                               bin("sv-route"), bin("sv-simulate")));
  INFO(p.err);
  REQUIRE(p.status == 0);
  return d;
}

struct Call {
  int status = -1;
  json envelope;
  std::string err;
};

// Runs a request as the executables run it in store mode, through the library: a read tool on
// HEAD's scene, a store tool on the store, an edit on HEAD recorded as the next revision (the
// store's id marks seeded first, so that no id the history used is handed out again; a dry run
// records nothing). A refusal is the error contract's status and envelope; any other exception
// is the internal error (status 6) the executables would report.
Call call(sv::Store& st, const sv::Tool& tool, const json& req, const sv::Scene& head_scene) {
  Call c;
  const std::string head = st.head_id();
  try {
    if (tool.kind != sv::ToolKind::edit) {
      const sv::Scene none;
      sv::ToolContext ctx{tool.kind == sv::ToolKind::store ? none : head_scene, &st, head};
      sv::ToolResult r;
      c.envelope = sv::run_tool(tool, ctx, req, r);
    } else {
      json item = req;
      if (item.is_object()) item["tool"] = tool.name;
      std::vector<sv::EditStep> steps = sv::parse_batch(json::array({item}));
      sv::Scene scene = head_scene;
      for (const char* kind : {"primitive", "region"})
        if (int mark = st.id_mark(kind); mark > sv::id_high_mark(scene, kind)) scene.extra["id_marks"][kind] = mark;
      sv::ToolContext ctx{scene, &st, head};
      sv::EditSession session = sv::apply_edits(ctx, steps);
      const bool dry = steps[0].request.value("dry_run", false);
      c.envelope = {{"ok", true}, {"tool", tool.name}, {"dry_run", dry}, {"parent_revision_id", head},
                    {"before", session.before}, {"after", session.after}, {"added_primitive_ids", session.added},
                    {"removed_primitive_ids", session.removed}, {"changed_primitive_ids", session.changed},
                    {"revision_id", nullptr}};
      if (!dry) {
        sv::Scene& out = session.scene;
        out.revision = sv::RevisionInfo{};
        out.revision.parent = head;
        out.revision.tool = tool.name;
        json args = steps[0].request;
        args.erase("dry_run");
        args.erase("note");
        out.revision.args.push_back(tool.name + " " + args.dump());
        const std::string id = st.put_scene(out);
        st.advance_head(head, id, tool.name);
        c.envelope["revision_id"] = id;
      }
    }
    c.status = 0;
  } catch (const sv::Error& e) {
    c.status = sv::exit_status(e.code());
    c.envelope = e.envelope();
    c.err = e.what();
  } catch (const std::exception& e) {
    c.status = sv::exit_status(sv::Code::internal);
    c.envelope = sv::Error(sv::Code::internal, e.what()).envelope();
    c.err = e.what();
  }
  return c;
}

// What a step may change in the store: refs, HEAD, the objects and the log.
struct StoreState {
  std::string head;
  std::vector<std::pair<std::string, std::string>> refs;
  std::vector<std::string> objects;
  size_t log_entries = 0;
  bool operator==(const StoreState& o) const {
    return head == o.head && refs == o.refs && objects == o.objects && log_entries == o.log_entries;
  }
};

StoreState state_of(const sv::Store& st) {
  StoreState s{st.head_text(), st.refs(), st.object_ids(), st.log().size()};
  std::sort(s.objects.begin(), s.objects.end());
  return s;
}

std::set<std::string> primitive_ids(const sv::Scene& s) {
  std::set<std::string> out;
  if (s.primitives)
    for (const auto& p : *s.primitives) out.insert(p.id);
  return out;
}

// Requests drawn from a tool's request schema, with ids taken from the current scene and store.
class Generator {
 public:
  explicit Generator(unsigned seed) : rng_(seed) {}

  void look_at(const sv::Scene& head, const sv::Store& st, const std::vector<std::string>& scene_ids) {
    prims_.clear();
    for (const auto& id : primitive_ids(head)) prims_.push_back(id);
    vertices_.clear();
    if (head.graph)
      for (const auto& v : head.graph->vertices) vertices_.push_back(v.id);
    regions_.clear();
    for (const auto& r : head.regions)
      if (r.contains("name")) regions_.push_back(r["name"]);
    config_keys_.clear();
    for (auto it = head.config.begin(); it != head.config.end(); ++it) config_keys_.push_back(it.key());
    revisions_ = {"HEAD", "main"};
    for (const auto& [ref, value] : st.refs())
      if (ref.rfind("refs/heads/", 0) == 0) revisions_.push_back(ref.substr(11));
    for (const auto& id : scene_ids) {
      revisions_.push_back(id);
      revisions_.push_back(id.substr(0, 8));
    }
    width_ = head.source ? head.source->width : 100;
    height_ = head.source ? head.source->height : 100;
  }

  bool chance(double p) { return std::uniform_real_distribution<>(0, 1)(rng_) < p; }
  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  double uniform(double a, double b) { return std::uniform_real_distribution<>(a, b)(rng_); }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

  json request(const sv::Tool& t) { return value(sv::request_schema(t), "", 0); }

  // A request refused by its schema or its ids: one field broken. Returns what was broken.
  std::string break_request(const sv::Tool& t, json& req) {
    const json schema = sv::request_schema(t);
    std::vector<std::string> typed, enums, ids;
    for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) {
      const json& f = it.value();
      if (f.contains("type") && !f.contains("anyOf")) typed.push_back(it.key());
      if (f.contains("enum") || (f.contains("items") && f["items"].is_object() && f["items"].contains("enum")))
        enums.push_back(it.key());
      if (id_kind(it.key(), f) != "") ids.push_back(it.key());
    }
    switch (below(4)) {
      case 1:
        if (!typed.empty()) {
          const std::string k = pick(typed);
          req[k] = wrong_type(schema["properties"][k]);
          return "wrong type for " + k;
        }
        break;
      case 2:
        if (!enums.empty()) {
          const std::string k = pick(enums);
          const bool list = schema["properties"][k].contains("items");
          req[k] = list ? json::array({"no_such_value"}) : json("no_such_value");
          return "value outside the enum of " + k;
        }
        break;
      case 3:
        if (!ids.empty()) {
          const std::string k = pick(ids);
          const json& f = schema["properties"][k];
          const std::string kind = id_kind(k, f);
          const std::string bad = kind == "revision" ? "feedface" : kind == "vertex" ? "v_9999" : "p_9999";
          req[k] = is_type(f, "array") ? json::array({bad}) : json(bad);
          return "unknown id in " + k;
        }
        break;
      default:
        break;
    }
    req["no_such_field"] = 1;
    return "unknown field";
  }

 private:
  static bool is_type(const json& s, const std::string& type) {
    if (!s.contains("type")) return false;
    if (s["type"].is_string()) return s["type"] == type;
    for (const auto& t : s["type"])
      if (t == type) return true;
    return false;
  }

  // Which kind of id a field holds ("" when none): told by its name or description.
  static std::string id_kind(const std::string& key, const json& s) {
    const std::string doc = s.value("description", "");
    if (key.find("revision") != std::string::npos) return "revision";
    if (key.find("vertex") != std::string::npos) return "vertex";
    if (key.find("primitive") != std::string::npos || key == "id" || doc.find("primitive id") != std::string::npos)
      return "primitive";
    return "";
  }

  json wrong_type(const json& s) {
    for (const json& v : {json(42.5), json("text"), json::array({1}), json::object(), json(true)}) {
      const char* name = v.is_number() ? "number" : v.is_string() ? "string" : v.is_array() ? "array"
                       : v.is_object() ? "object" : "boolean";
      if (!is_type(s, name) && !(v.is_number() && is_type(s, "integer"))) return v;
    }
    return nullptr;
  }

  json id_of(const std::string& kind) {
    if (kind == "revision") return pick(revisions_);
    const auto& pool = kind == "vertex" ? vertices_ : prims_;
    return pool.empty() ? json("p_0001") : json(pick(pool));
  }

  // A coherent region of a random kind, or (sometimes) whatever the schema allows.
  json region(const json& s, int depth) {
    switch (below(6)) {
      case 0: {
        double x = uniform(0, width_), y = uniform(0, height_);
        return {{"kind", "rect"}, {"rect", {x, y, x + uniform(1, width_ / 2.0), y + uniform(1, height_ / 2.0)}}};
      }
      case 1:
        return {{"kind", "primitive_set"}, {"primitive_ids", json::array({id_of("primitive"), id_of("primitive")})}};
      case 2:
        return {{"kind", "vertex_neighborhood"}, {"vertex_id", id_of("vertex")}, {"radius_px", uniform(1, 30)}};
      case 3:
        return {{"kind", "named"}, {"name", regions_.empty() ? std::string("outline") : pick(regions_)}};
      case 4:
        return {{"kind", "polygon"},
                {"polygon", {{uniform(0, width_), uniform(0, height_)}, {uniform(0, width_), uniform(0, height_)},
                            {uniform(0, width_), uniform(0, height_)}}}};
      default:
        return object(s, depth);
    }
  }

  json object(const json& s, int depth) {
    json o = json::object();
    if (!s.contains("properties")) {  // a map (config overrides): key -> number
      if (!config_keys_.empty() && chance(0.5)) o[pick(config_keys_)] = uniform(0, 10);
      return o;
    }
    std::set<std::string> required;
    if (s.contains("required"))
      for (const auto& r : s["required"]) required.insert(r);
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
      const std::string& k = it.key();
      double p = k == "region" ? 0.15 : k == "dry_run" ? 0.2 : 0.45;
      if (required.count(k) || chance(p)) o[k] = k == "dry_run" ? json(true) : value(it.value(), k, depth + 1);
    }
    return o;
  }

  json edit_spec(int depth) {
    std::vector<const sv::Tool*> edits;
    for (const auto& t : sv::registry())
      if (t.kind == sv::ToolKind::edit) edits.push_back(&t);
    const sv::Tool& t = *pick(edits);
    json e = depth < 3 ? value(t.request, "", depth + 1) : json::object();
    e["tool"] = t.name;
    return e;
  }

  json value(const json& s, const std::string& key, int depth) {
    if (s.contains("const")) return s["const"];
    if (s.contains("anyOf")) return value(s["anyOf"][below(s["anyOf"].size())], key, depth);
    if (s.contains("enum")) return pick(s["enum"].get<std::vector<json>>());
    if (is_type(s, "null") && chance(0.3)) return nullptr;
    const std::string kind = id_kind(key, s);
    if (is_type(s, "string")) {
      if (!kind.empty()) return id_of(kind);
      if (key == "name") return regions_.empty() || chance(0.5) ? fmt::format("try-{}", below(5)) : pick(regions_);
      if (key == "keys") return config_keys_.empty() ? std::string("fit.") : pick(config_keys_);
      return pick(std::vector<std::string>{"a note", "why not", "x", ""});
    }
    if (is_type(s, "boolean")) return chance(0.5);
    if (is_type(s, "integer")) {
      const long long lo = s.value("minimum", 0LL);
      return lo + static_cast<long long>(below(12));
    }
    if (is_type(s, "number")) {
      const double lo = s.value("minimum", 0.0);
      switch (below(3)) {
        case 0: return uniform(lo, lo + 1);
        case 1: return uniform(lo, lo + 10);
        default: return uniform(lo, lo + std::max(width_, height_));
      }
    }
    if (is_type(s, "array")) {
      json a = json::array();
      if (s.contains("items") && s["items"].is_array()) {  // a tuple
        for (const auto& item : s["items"]) a.push_back(value(item, key, depth + 1));
        return a;
      }
      const json& items = s.value("items", json::object());
      const size_t lo = s.value("minItems", 0), hi = std::min<size_t>(s.value("maxItems", lo + 3), lo + 3);
      if (lo == 2 && hi == 2 && is_type(items, "number"))  // a point
        return json::array({uniform(0, width_), uniform(0, height_)});
      const size_t n = lo + below(hi - lo + 1);
      for (size_t i = 0; i < n; ++i)
        a.push_back(key == "edits" ? edit_spec(depth) : value(items, key, depth + 1));
      return a;
    }
    if (is_type(s, "object")) {
      const bool is_region = s.contains("properties") && s["properties"].contains("vertex_id");
      return is_region ? region(s, depth) : object(s, depth);
    }
    return chance(0.5) ? json(uniform(0, 1)) : json("auto");
  }

  std::mt19937 rng_;
  std::vector<std::string> prims_, vertices_, regions_, config_keys_, revisions_;
  double width_ = 100, height_ = 100;
};

// Every id a result names as a primitive of the scene it ran on.
void named_primitives(const json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      const bool names = k == "primitive_id" || k == "primitive_ids" || k == "after_primitive_id" ||
                         k == "before_primitive_id" || k == "nearest_primitive_id";
      if (names && it.value().is_string()) out.insert(it.value().get<std::string>());
      if (names && it.value().is_array())
        for (const auto& x : it.value())
          if (x.is_string()) out.insert(x.get<std::string>());
      named_primitives(it.value(), out);
    }
  } else if (j.is_array()) {
    for (const auto& x : j) named_primitives(x, out);
  }
}

const json kAllMetrics = {"draw_time", "primitive_count", "pen_up_count", "precision", "recall", "f1", "f1_1px", "chamfer"};

// The stored revisions of one sequence: a revision never changes, so each is read (and checked)
// once, and evaluated (EvaluateRevision, as the tool reports it) once.
class Revisions {
 public:
  explicit Revisions(sv::Store& st) : st_(st) {}
  const sv::Scene& scene(const std::string& id) {
    auto it = scenes_.find(id);
    if (it == scenes_.end()) it = scenes_.emplace(id, st_.read_scene(id)).first;
    return it->second;
  }
  const json& metrics(const std::string& id) {
    auto it = metrics_.find(id);
    if (it == metrics_.end()) {
      const sv::Tool& t = *sv::find_tool("EvaluateRevision");
      sv::ToolContext ctx{scene(id), &st_, id};
      sv::ToolResult r;
      it = metrics_.emplace(id, sv::run_tool(t, ctx, {{"metrics", kAllMetrics}}, r)["metrics"]).first;
    }
    return it->second;
  }

 private:
  sv::Store& st_;
  std::map<std::string, sv::Scene> scenes_;
  std::map<std::string, json> metrics_;
};

// Checks one step's consequences; every violation is one line in `defects`.
class Checker {
 public:
  Checker(sv::Store& st, Revisions& revs, std::vector<std::string>& defects) : st_(st), revs_(revs), defects_(defects) {
    for (const auto& id : st_.object_ids()) note_revision(id, false);
  }

  const std::vector<std::string>& scenes() const { return scenes_; }
  void defect(const std::string& what) { defects_.push_back(where_ + ": " + what); }
  void at(const std::string& where) { where_ = where; }

  // A revision stored by this step: readable, valid, its fresh ids new to the whole history.
  void note_revision(const std::string& id, bool check = true) {
    if (!seen_.insert(id).second) return;
    if (st_.read_object(id).rfind("{", 0) != 0) return;  // the source image
    const sv::Scene* read = nullptr;
    try {
      read = &revs_.scene(id);
    } catch (const std::exception& e) {
      defect("stored revision " + id.substr(0, 12) + " cannot be read: " + e.what());
      return;
    }
    scenes_.push_back(id);
    const sv::Scene& s = *read;
    if (std::string bad = sv::check_scene_invariants(s); !bad.empty())
      defect("revision " + id.substr(0, 12) + " breaks the scene invariants: " + bad);
    std::set<std::string> parent;
    if (!s.revision.parent.empty() && st_.has_object(s.revision.parent)) parent = primitive_ids(revs_.scene(s.revision.parent));
    for (const auto& pid : primitive_ids(s)) {
      // A revert brings back the target's primitives; anything else new to its parent is fresh.
      if (check && !parent.count(pid) && ever_.count(pid) && s.revision.tool != "Revert")
        defect(fmt::format("revision {} ({}) reuses id {}, which the history has used before", id.substr(0, 12),
                           s.revision.tool, pid));
    }
    for (const auto& pid : primitive_ids(s)) ever_.insert(pid);
  }

  // fsck runs when the step changed the store (objects are immutable: an unchanged store has
  // the report it had).
  void after_step(bool changed) {
    for (const auto& id : st_.object_ids()) note_revision(id);
    if (!changed) return;
    sv::FsckReport r = sv::fsck(st_);
    if (!r.clean()) defect("fsck: " + r.text());
  }

 private:
  sv::Store& st_;
  Revisions& revs_;
  std::vector<std::string>& defects_;
  std::string where_;
  std::set<std::string> seen_, ever_;
  std::vector<std::string> scenes_;  // the stored revisions, in the order they appeared
};

void check_edit(sv::Store& st, Revisions& revs, Checker& chk, const json& env, const StoreState& before, const std::string& old_head) {
  const bool dry = env.value("dry_run", false);
  if (dry) {
    if (!(state_of(st) == before)) chk.defect("a dry run changed the store");
  } else {
    if (env["revision_id"] != st.head_id()) chk.defect("the reported revision is not HEAD");
    if (env["parent_revision_id"] != old_head) chk.defect("the reported parent is not the edited HEAD");
  }
  const json& parent = revs.metrics(old_head);
  for (auto it = env["before"].begin(); it != env["before"].end(); ++it)
    if (parent.value(it.key(), json()) != it.value())
      chk.defect(fmt::format("before.{} = {} but EvaluateRevision of the parent says {}", it.key(), it.value().dump(),
                             parent.value(it.key(), json()).dump()));
  if (dry) return;
  const std::string id = env["revision_id"];
  const json& child = revs.metrics(id);
  for (auto it = env["after"].begin(); it != env["after"].end(); ++it)
    if (child.value(it.key(), json()) != it.value())
      chk.defect(fmt::format("after.{} = {} but EvaluateRevision of the new revision says {}", it.key(),
                             it.value().dump(), child.value(it.key(), json()).dump()));
  const std::set<std::string> a = primitive_ids(revs.scene(old_head)), b = primitive_ids(revs.scene(id));
  std::set<std::string> added, removed;
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::inserter(added, added.end()));
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(removed, removed.end()));
  if (env["added_primitive_ids"].get<std::set<std::string>>() != added) chk.defect("added_primitive_ids are not the ids added");
  if (env["removed_primitive_ids"].get<std::set<std::string>>() != removed)
    chk.defect("removed_primitive_ids are not the ids removed");
}

struct Totals {
  int sequences = 0, steps = 0, refused = 0, edits = 0;
  std::map<std::string, int> calls;
};

void run_sequence(const fs::path& templ, int index, unsigned seed, Totals& totals, std::vector<std::string>& defects) {
  const fs::path dir = scratch() / fmt::format("seq-{}-{}", templ.filename().string(), index);
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(templ / ".svrev", dir / ".svrev", fs::copy_options::recursive);
  sv::Store st(dir / ".svrev");
  Generator gen(seed);
  Revisions revs(st);
  Checker chk(st, revs, defects);
  const auto& tools = sv::registry();
  for (int step = 0; step < kStepsPerSequence; ++step) {
    const std::string head = st.head_id();
    const sv::Scene scene = head.empty() ? sv::Scene{} : revs.scene(head);
    gen.look_at(scene, st, chk.scenes());
    const sv::Tool& tool = tools[gen.below(tools.size())];
    json req = gen.request(tool);
    std::string broken;
    if (gen.chance(0.3)) broken = gen.break_request(tool, req);
    chk.at(fmt::format("{} #{} step {}: {} {}{}", templ.filename().string(), index, step, tool.name, req.dump(),
                       broken.empty() ? "" : " (" + broken + ")"));
    const StoreState before = state_of(st);
    const Call c = call(st, tool, req, scene);
    ++totals.steps;
    ++totals.calls[tool.name];
    if (c.status != 0) {
      ++totals.refused;
      // invalid_scene is the answer for a scene that lacks what the tool needs (a revision the
      // history tools checked out before sv-fit or sv-route ran); any other status 3 or 6 means the
      // tool broke or wanted to store a broken scene.
      const std::string message = c.envelope.value("error", json::object()).value("message", "");
      const bool lacks_stage = c.envelope["error"].value("code", "") == "invalid_scene" &&
                               message.rfind("the scene has no ", 0) == 0;
      if ((c.status == 3 && !lacks_stage) || c.status == 6)
        chk.defect(fmt::format("refused with status {}: {}", c.status, c.err));
      if (!broken.empty() && broken.rfind("unknown id", 0) != 0 && c.status != 2)
        chk.defect(fmt::format("an invalid request was refused with status {}, not 2: {}", c.status, c.err));
      if (!(state_of(st) == before)) chk.defect("a refused request changed the store: " + c.err);
    } else {
      if (!broken.empty()) chk.defect("an invalid request was accepted: " + c.envelope.value("llm_text", ""));
      if (tool.kind == sv::ToolKind::read) {
        if (!(state_of(st) == before)) chk.defect("a read-only tool changed the store");
        // Results name primitives of the scene they ran on (unless the request names another revision).
        bool other = false;
        for (const char* k : {"revision", "revision_id", "revision_a", "revision_b"})
          other = other || (req.contains(k) && !req[k].is_null());
        std::set<std::string> named;
        named_primitives(c.envelope, named);
        if (!other && tool.name != "SimulateEdit")
          for (const auto& id : named)
            if (!scene.primitive(id)) chk.defect("the result names " + id + ", which is not a primitive of the scene");
      }
      if (tool.kind == sv::ToolKind::edit) {
        ++totals.edits;
        check_edit(st, revs, chk, c.envelope, before, head);
      }
    }
    chk.after_step(!(state_of(st) == before));
  }
  ++totals.sequences;
}

}  // namespace

TEST_CASE("random request sequences over every tool leave a truthful, intact store", "[e2e][contract]") {
  Totals totals;
  std::vector<std::string> defects;
  const auto t0 = std::chrono::steady_clock::now();
  unsigned seed = 20261201;
  for (const Sample& drawing : kDrawings) {
    const fs::path templ = template_store(drawing);
    for (int i = 0; i < kSequencesPerDrawing; ++i) run_sequence(templ, i, seed++, totals, defects);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN(fmt::format("{} sequences, {} steps ({} refused, {} edits) in {:.1f} s; tools called: {}", totals.sequences,
                   totals.steps, totals.refused, totals.edits, secs, json(totals.calls).dump()));
  for (const auto& d : defects) UNSCOPED_INFO(d);
  CHECK(defects.empty());
  CHECK(totals.sequences == static_cast<int>(std::size(kDrawings)) * kSequencesPerDrawing);
  CHECK(totals.calls.size() == sv::registry().size());  // every tool drawn at least once
}
