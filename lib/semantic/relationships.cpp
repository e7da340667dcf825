#include "semantic/relationships.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "edit/geometry.hpp"
#include "eval/score.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::semantic {

namespace {

std::string evidence_text(const std::vector<Evidence>& ev) {
  std::string out;
  for (const Evidence& e : ev) out += (out.empty() ? "" : "; ") + e.text();
  return out;
}

std::string form_list(const std::vector<int>& numbers) {
  std::string out;
  for (int n : numbers) out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out;
}

json line_json(Vec2 a, Vec2 b) { return json::array({point_json(a), point_json(b)}); }

struct FormSamples {
  std::vector<Polyline> all;                        // per form: samples of its strokes
  std::vector<std::map<std::string, Polyline>> by_id;  // per form: samples per primitive
};

FormSamples samples_of(const Analysis& a, double step) {
  FormSamples fs;
  for (const Form& f : a.forms) {
    Polyline all;
    std::map<std::string, Polyline> ids;
    for (int s : f.strokes) {
      Polyline r = resample(a.strokes[s].points, step);
      all.insert(all.end(), r.begin(), r.end());
      if (!a.strokes[s].id.empty()) ids[a.strokes[s].id].insert(ids[a.strokes[s].id].end(), r.begin(), r.end());
    }
    fs.all.push_back(std::move(all));
    fs.by_id.push_back(std::move(ids));
  }
  return fs;
}

// Mean distance of `pts` reflected across (c, n) from `target`, both ways.
double reflected_chamfer(const Polyline& pts, const Polyline& target, Vec2 c, Vec2 n) {
  if (pts.empty() || target.empty()) return INFINITY;
  Polyline ref;
  for (Vec2 p : pts) ref.push_back(reflect(p, c, n));
  NearestPoints to_target({target}, 0.5), to_ref({ref}, 0.5);
  double s = 0;
  for (Vec2 p : ref) s += to_target.distance(p);
  double t = 0;
  for (Vec2 p : target) t += to_ref.distance(p);
  return 0.5 * (s / ref.size() + t / target.size());
}

double gyration(const Polyline& pts, Vec2 c) {
  double s = 0;
  for (Vec2 p : pts) s += (p.x - c.x) * (p.x - c.x) + (p.y - c.y) * (p.y - c.y);
  return pts.empty() ? 0 : std::sqrt(s / pts.size());
}

const Primitive* find_prim(const std::vector<Primitive>& ps, const std::string& id) {
  for (const auto& p : ps)
    if (p.id == id) return &p;
  return nullptr;
}

bool is_round(const Shape& s) {
  return s.type == PrimType::circle || (s.type == PrimType::arc && std::isfinite(s.radius) && s.radius > 0);
}


// What every kind of relationship is found from, and what is found: the analysis and its
// primitives, the forms' samples, and the forms a texture, a row or a repetition already holds
// (not paired or aligned again).
struct RelationFinder {
  RelationFinder(const Analysis& analysis, const Scene* s, const RelationParams& params)
      : a(analysis), scene(s), prims(s && s->primitives ? *s->primitives : no_primitives()), P(params), sw(a.sw),
        fs(samples_of(a, std::min(1.0, sw / 2))), n(a.forms.size()), grouped(n, false) {
    for (const auto& t : a.textures)
      for (int i : t) grouped[i] = true;
  }
  static const std::vector<Primitive>& no_primitives() {
    static const std::vector<Primitive> none;
    return none;
  }
  void containment();
  void shared_baselines();
  void repetition();
  void mirrors();
  void alignment();
  void tangency();

  const Analysis& a;
  const Scene* scene;
  const std::vector<Primitive>& prims;
  const RelationParams& P;
  const double sw;
  const FormSamples fs;
  const size_t n;
  std::vector<bool> grouped;
  std::vector<Relationship> out;
};

// Containment: each container with the forms in its closed regions.
void RelationFinder::containment() {
  for (size_t i = 0; i < n; ++i) {
    const Form& f = a.forms[i];
    if (f.children.empty()) continue;
    Relationship r;
    r.kind = "containment";
    r.forms.push_back(f.number);
    r.primitive_ids = f.primitive_ids;
    for (int c : f.children) {
      r.forms.push_back(a.forms[c].number);
      r.primitive_ids.insert(r.primitive_ids.end(), a.forms[c].primitive_ids.begin(), a.forms[c].primitive_ids.end());
    }
    r.axis_or_anchor = point_json(f.centroid);
    r.box = f.box;
    double least = 1;
    for (int c : f.children) least = std::min(least, a.forms[c].inside_share);
    r.evidence.push_back(measured("least_inside_share", least, ">=", FormParams{}.inside_fraction, "ratio"));
    r.confidence = confidence_of(r.evidence);
    std::vector<int> kids(r.forms.begin() + 1, r.forms.end());
    r.rationale = fmt::format("form {} encloses form{} {} (each with at least 90% of its ink inside its closed region)",
                              f.number, kids.size() == 1 ? "" : "s", form_list(kids));
    out.push_back(r);
  }
}

// Shared baselines: the rows of annotation.
void RelationFinder::shared_baselines() {
  for (const auto& row : a.rows) {
    Relationship r;
    r.kind = "shared_baseline";
    double spread = 0;
    for (int i : row.forms) {
      r.forms.push_back(a.forms[i].number);
      r.primitive_ids.insert(r.primitive_ids.end(), a.forms[i].primitive_ids.begin(), a.forms[i].primitive_ids.end());
      spread = std::max(spread, std::abs(a.forms[i].box.y1 - row.baseline_px));
      r.box.add({a.forms[i].box.x0, a.forms[i].box.y0});
      r.box.add({a.forms[i].box.x1, a.forms[i].box.y1});
      grouped[i] = true;
    }
    r.axis_or_anchor = round3(row.baseline_px);
    r.evidence.push_back(measured("forms", double(row.forms.size()), ">=", 3, "count"));
    r.evidence.push_back(measured("bottoms_off_baseline", spread / sw, "<=", row.tolerance_px / sw, "sw"));
    r.confidence = confidence_of(r.evidence);
    r.rationale = fmt::format("forms {} stand side by side on the baseline y = {:.1f}: {}", form_list(r.forms),
                              row.baseline_px, evidence_text(r.evidence));
    out.push_back(r);
  }
}

// Repetition: forms alike in length and spread about their centre.
void RelationFinder::repetition() {
  std::vector<double> gyr(n);
  for (size_t i = 0; i < n; ++i) gyr[i] = gyration(fs.all[i], a.forms[i].centroid);
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> find = [&](int i) { return parent[i] == i ? i : parent[i] = find(parent[i]); };
  auto alike = [&](double x, double y) { return std::abs(x - y) <= std::max(P.repeat_sw * sw, 0.1 * std::max(x, y)); };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const Form &fi = a.forms[i], &fj = a.forms[j];
      if (grouped[i] || grouped[j] || fi.parent != fj.parent || fi.closed != fj.closed ||
          fi.holes.size() != fj.holes.size() || fi.strokes.size() != fj.strokes.size())
        continue;
      if (alike(fi.length_px, fj.length_px) && alike(gyr[i], gyr[j])) parent[find(int(j))] = find(int(i));
    }
  std::map<int, std::vector<int>> sets;
  for (size_t i = 0; i < n; ++i) sets[find(int(i))].push_back(int(i));
  for (auto& [k, set] : sets) {
    if (int(set.size()) < P.repeat_min) continue;
    Relationship r;
    r.kind = "repetition";
    Polyline centres;
    for (int i : set) {
      r.forms.push_back(a.forms[i].number);
      r.primitive_ids.insert(r.primitive_ids.end(), a.forms[i].primitive_ids.begin(), a.forms[i].primitive_ids.end());
      centres.push_back(a.forms[i].centroid);
      r.box.add({a.forms[i].box.x0, a.forms[i].box.y0});
      r.box.add({a.forms[i].box.x1, a.forms[i].box.y1});
      grouped[i] = true;
    }
    double len_spread = 0;
    for (int i : set) len_spread = std::max(len_spread, std::abs(a.forms[i].length_px - a.forms[set[0]].length_px));
    r.evidence.push_back(measured("copies", double(set.size()), ">=", P.repeat_min, "count"));
    r.evidence.push_back(measured("length_spread", len_spread / sw, "<=",
                                  std::max(P.repeat_sw, 0.1 * a.forms[set[0]].length_px / sw), "sw"));
    // How the copies are laid out: along a line, else around a centre, else scattered.
    const fitting::LineFit lf = fitting::fit_line(centres);
    double line_res = 0;
    for (Vec2 c : centres) line_res = std::max(line_res, std::abs(cross(lf.dir, c - lf.centroid)));
    std::string layout;
    if (line_res <= P.repeat_sw * sw) {
      layout = fmt::format("translated along a line through {} at {:.0f} deg", pt_text(lf.centroid),
                           rad2deg(angle_of(lf.dir)));
      r.axis_or_anchor = point_json(lf.centroid);
      r.evidence.push_back(measured("off_line", line_res / sw, "<=", P.repeat_sw, "sw"));
    } else if (auto c = centres.size() >= 4 ? fitting::kasa_circle(centres) : std::nullopt) {  // three points always lie on a circle
      double res = 0;
      for (Vec2 q : centres) res = std::max(res, std::abs(dist(q, c->center) - c->radius));
      if (res <= P.repeat_sw * sw) {
        layout = fmt::format("rotated about {} at radius {:.1f} px", pt_text(c->center), c->radius);
        r.axis_or_anchor = point_json(c->center);
        r.evidence.push_back(measured("off_circle", res / sw, "<=", P.repeat_sw, "sw"));
      }
    }
    if (layout.empty()) {
      layout = "translated copies";
      r.axis_or_anchor = point_json(lf.centroid);
    }
    r.confidence = confidence_of(r.evidence);
    r.rationale = fmt::format("{} copies of one shape (forms {}), {}: {}", set.size(), form_list(r.forms), layout,
                              evidence_text(r.evidence));
    out.push_back(r);
  }
}

// Mirror pairs and near-mirror pairs, about the perpendicular bisector of their centres when
// it passes through the centre of what holds them.
void RelationFinder::mirrors() {
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const Form &fa = a.forms[i], &fb = a.forms[j];
      if (grouped[i] || grouped[j] || fa.parent != fb.parent || fa.closed != fb.closed) continue;
      const double ratio = std::max(fa.length_px, fb.length_px) / std::max(1e-9, std::min(fa.length_px, fb.length_px));
      if (ratio > 1.5 || dist(fa.centroid, fb.centroid) < sw) continue;
      const Vec2 c = (fa.centroid + fb.centroid) * 0.5, nrm = unit(fb.centroid - fa.centroid);
      const Vec2 centre = fa.parent >= 0 ? a.forms[fa.parent].centroid : a.ink_centroid;
      const double off_axis = std::abs(dot(centre - c, nrm));
      if (off_axis > P.axis_reach_sw * sw) continue;
      const double ch = reflected_chamfer(fs.all[i], fs.all[j], c, nrm);
      const bool mirror = ch <= P.mirror_sw * sw && ratio <= P.size_ratio;
      if (!mirror && ch > P.asymmetry_sw * sw) continue;
      Relationship r;
      r.kind = mirror ? "mirror" : "intentional_asymmetry";
      r.forms = {fa.number, fb.number};
      r.box.add({std::min(fa.box.x0, fb.box.x0), std::min(fa.box.y0, fb.box.y0)});
      r.box.add({std::max(fa.box.x1, fb.box.x1), std::max(fa.box.y1, fb.box.y1)});
      const Vec2 dir = perp(nrm);
      const double half = 0.5 * bbox_diagonal(r.box);
      r.axis_or_anchor = line_json(c - dir * half, c + dir * half);
      r.evidence.push_back(measured("reflected_distance", ch / sw, mirror ? "<=" : ">", P.mirror_sw, "sw"));
      if (!mirror) r.evidence.push_back(measured("reflected_distance", ch / sw, "<=", P.asymmetry_sw, "sw"));
      r.evidence.push_back(measured("length_ratio", ratio, "<=", mirror ? P.size_ratio : 1.5, "ratio"));
      r.evidence.push_back(measured("axis_from_container_centre", off_axis / sw, "<=", P.axis_reach_sw, "sw"));
      // Primitive pairs, each matched to the partner primitive of its type it reflects onto best.
      std::set<std::string> used;
      for (const auto& [ida, pa] : fs.by_id[i]) {
        const Primitive* qa = find_prim(prims, ida);
        std::string best;
        double best_d = INFINITY;
        for (const auto& [idb, pb] : fs.by_id[j]) {
          const Primitive* qb = find_prim(prims, idb);
          if (used.count(idb) || !qa || !qb || qa->shape.type != qb->shape.type) continue;
          const double d = reflected_chamfer(pa, pb, c, nrm);
          if (d < best_d) best_d = d, best = idb;
        }
        if (best.empty() || best_d > P.asymmetry_sw * sw) continue;
        used.insert(best);
        r.primitive_ids.push_back(ida);
        r.primitive_ids.push_back(best);
      }
      std::string refusal;
      if (mirror && scene && r.primitive_ids.empty()) {
        r.kind = "intentional_asymmetry";
        refusal = "; no primitive of one reflects onto a primitive of the same type in the other";
      } else if (mirror && scene) {
        try {
          edit::enforce_relation(*scene, "mirror", r.primitive_ids, r.axis_or_anchor);
        } catch (const Error& e) {
          if (e.code() != Code::unsolvable_constraint) throw;
          r.kind = "intentional_asymmetry";
          refusal = fmt::format("; EnforceRelation mirror refuses it: {}", e.what());
        }
      }
      r.confidence = confidence_of(r.evidence);
      const std::string where = fa.parent >= 0 ? fmt::format("the centre of form {}, their container", a.forms[fa.parent].number)
                                               : std::string("the centre of the drawing");
      r.rationale = fmt::format("forms {} and {} {} about the axis through {} at {:.0f} deg, which passes {:.2f} sw from {}: {}",
                                fa.number, fb.number, mirror ? "mirror each other" : "nearly mirror each other but differ beyond tolerance",
                                pt_text(c), rad2deg(angle_of(dir)), off_axis / sw, where, evidence_text(r.evidence)) +
                    refusal;
      out.push_back(r);
    }
}

// Alignment: three or more siblings sharing a centre line or an edge.
void RelationFinder::alignment() {
  std::map<int, std::vector<int>> siblings;
  for (size_t i = 0; i < n; ++i)
    if (!grouped[i]) siblings[a.forms[i].parent].push_back(int(i));
  const char* keys[] = {"centre x", "centre y", "left edge x", "right edge x", "top edge y", "bottom edge y"};
  auto value = [&](int i, int k) {
    const Form& f = a.forms[i];
    switch (k) {
      case 0: return (f.box.x0 + f.box.x1) / 2;
      case 1: return (f.box.y0 + f.box.y1) / 2;
      case 2: return f.box.x0;
      case 3: return f.box.x1;
      case 4: return f.box.y0;
      default: return f.box.y1;
    }
  };
  for (auto& [p, sib] : siblings) {
    std::set<std::vector<int>> seen;
    for (int k = 0; k < 6; ++k) {
      std::vector<int> order = sib;
      std::sort(order.begin(), order.end(), [&](int x, int y) { return std::make_pair(value(x, k), x) < std::make_pair(value(y, k), y); });
      for (size_t s = 0; s < order.size();) {
        size_t e = s + 1;
        while (e < order.size() && value(order[e], k) - value(order[s], k) <= P.align_sw * sw) ++e;
        if (int(e - s) >= P.align_min) {
          std::vector<int> set(order.begin() + s, order.begin() + e);
          std::vector<int> key = set;
          std::sort(key.begin(), key.end());
          if (seen.insert(key).second) {
            Relationship r;
            r.kind = "alignment";
            double sum = 0;
            for (int i : set) {
              r.forms.push_back(a.forms[i].number);
              r.primitive_ids.insert(r.primitive_ids.end(), a.forms[i].primitive_ids.begin(), a.forms[i].primitive_ids.end());
              sum += value(i, k);
              r.box.add({a.forms[i].box.x0, a.forms[i].box.y0});
              r.box.add({a.forms[i].box.x1, a.forms[i].box.y1});
            }
            const double spread = value(order[e - 1], k) - value(order[s], k);
            r.axis_or_anchor = round3(sum / set.size());
            r.evidence.push_back(measured("spread", spread / sw, "<=", P.align_sw, "sw"));
            r.evidence.push_back(measured("forms", double(set.size()), ">=", P.align_min, "count"));
            r.confidence = confidence_of(r.evidence);
            r.rationale = fmt::format("forms {} share their {} at {:.1f}: {}", form_list(r.forms), keys[k], sum / set.size(),
                                      evidence_text(r.evidence));
            out.push_back(r);
          }
        }
        s = e;
      }
    }
  }
}

// Tangency: a circle or arc touching a line or another curve away from their ends.
void RelationFinder::tangency() {
  std::vector<const Primitive*> ps;
  std::map<std::string, int> form_number;
  for (const Form& f : a.forms)
    for (const auto& id : f.primitive_ids)
      if (const Primitive* p = find_prim(prims, id)) ps.push_back(p), form_number[id] = f.number;
  std::sort(ps.begin(), ps.end(), [](const Primitive* x, const Primitive* y) { return x->id < y->id; });
  const double tol = P.tangency_sw * sw;
  auto near_end = [&](const Shape& s, Vec2 q) {
    return s.type != PrimType::circle && (dist(q, s.p0) <= sw || dist(q, s.p1) <= sw);
  };
  for (size_t x = 0; x < ps.size() && ps.size() <= 3000; ++x)
    for (size_t y = 0; y < ps.size(); ++y) {
      if (x == y) continue;
      const Shape &r0 = ps[x]->shape, &o = ps[y]->shape;
      if (!is_round(r0) || (is_round(o) && y < x)) continue;
      Vec2 contact;
      double gap = INFINITY;
      if (o.type == PrimType::line) {
        const Vec2 d = unit(o.p1 - o.p0);
        const double t = dot(r0.center - o.p0, d);
        if (t <= 0 || t >= dist(o.p0, o.p1)) continue;
        const Vec2 foot = o.p0 + d * t;
        gap = std::abs(dist(r0.center, foot) - r0.radius);
        contact = foot;
      } else if (is_round(o)) {
        const double dd = dist(r0.center, o.center);
        if (dd <= tol) continue;
        const double ext = std::abs(dd - (r0.radius + o.radius)), in = std::abs(dd - std::abs(r0.radius - o.radius));
        gap = std::min(ext, in);
        const Shape& big = r0.radius >= o.radius ? r0 : o;
        const Shape& small = r0.radius >= o.radius ? o : r0;
        contact = ext <= in ? r0.center + unit(o.center - r0.center) * r0.radius
                            : big.center + unit(small.center - big.center) * big.radius;
      } else {
        continue;
      }
      if (gap > tol || r0.distance_to(contact) > tol || o.distance_to(contact) > tol) continue;
      if (near_end(r0, contact) && near_end(o, contact)) continue;  // a joint of a chain, not a touch
      Relationship r;
      r.kind = "tangency";
      r.primitive_ids = {ps[x]->id, ps[y]->id};
      r.forms = {form_number[ps[x]->id], form_number[ps[y]->id]};
      if (r.forms[0] == r.forms[1]) r.forms.pop_back();
      r.axis_or_anchor = point_json(contact);
      r.box.add(contact);
      r.evidence.push_back(measured("gap", gap / sw, "<=", P.tangency_sw, "sw"));
      r.confidence = confidence_of(r.evidence);
      r.rationale = fmt::format("{} touches {} at {} without crossing: {}", ps[x]->id, ps[y]->id, pt_text(contact),
                                evidence_text(r.evidence));
      out.push_back(r);
    }
}

}  // namespace

std::vector<Relationship> implied_relationships(const Analysis& a, const Scene* scene, const RelationParams& P) {
  RelationFinder f(a, scene, P);
  // In this order: a row or a repetition groups its forms before pairs and alignments are sought.
  f.containment();
  f.shared_baselines();
  f.repetition();
  f.mirrors();
  f.alignment();
  f.tangency();
  return std::move(f.out);
}

}  // namespace sv::semantic
