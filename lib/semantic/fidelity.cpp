#include "semantic/fidelity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "eval/coverage.hpp"
#include "eval/score.hpp"
#include "semantic/relationships.hpp"

namespace sv::semantic {

namespace {

// Ink as sample points with their direction of travel, for nearest-point queries.
struct InkPoint {
  Vec2 p, t;
  int stroke = 0;
};

class Ink {
 public:
  Ink(const std::vector<Stroke>& strokes, double step, double chord, double cell) : cell_(cell) {
    const int k = std::max(1, static_cast<int>(std::lround(chord / step)));
    for (size_t s = 0; s < strokes.size(); ++s) {
      const Polyline r = resample(strokes[s].points, step);
      for (size_t i = 0; i < r.size(); ++i) {
        const size_t a = i >= size_t(k) ? i - k : 0, b = std::min(r.size() - 1, i + k);
        pts_.push_back({r[i], r.size() > 1 ? unit(r[b] - r[a]) : Vec2{1, 0}, int(s)});
        grid_[key(r[i])].push_back(pts_.size() - 1);
      }
    }
  }
  const std::vector<InkPoint>& points() const { return pts_; }
  // The nearest point within `reach`; with `dir`, only points whose direction is within
  // `max_deg` of it (either way along the stroke). nullptr when none.
  const InkPoint* nearest(Vec2 q, double reach, const Vec2* dir = nullptr, double max_deg = 90) const {
    const long rings = static_cast<long>(std::ceil(reach / cell_));
    const auto [cx, cy] = key(q);
    const InkPoint* best = nullptr;
    double bd = reach;
    const double min_cos = std::cos(deg2rad(max_deg));
    for (long dx = -rings; dx <= rings; ++dx)
      for (long dy = -rings; dy <= rings; ++dy) {
        auto it = grid_.find({cx + dx, cy + dy});
        if (it == grid_.end()) continue;
        for (size_t i : it->second) {
          const double d = dist(pts_[i].p, q);
          if (d > bd || (d == bd && best)) continue;
          if (dir && std::abs(dot(*dir, pts_[i].t)) < min_cos) continue;
          bd = d, best = &pts_[i];
        }
      }
    return best;
  }

 private:
  std::pair<long, long> key(Vec2 p) const {
    return {static_cast<long>(std::floor(p.x / cell_)), static_cast<long>(std::floor(p.y / cell_))};
  }
  double cell_;
  std::vector<InkPoint> pts_;
  std::map<std::pair<long, long>, std::vector<size_t>> grid_;
};

double hole_weight(const Hole& h) { return std::sqrt(h.area_px); }

// Credit for a closed region matched by overlap: full from IoU 0.5, none at 0.2 and below.
double overlap_credit(double iou) { return std::clamp((iou - 0.2) / 0.3, 0.0, 1.0); }

std::string box_text(const BBox& b) { return fmt::format("[{:.0f},{:.0f},{:.0f},{:.0f}]", b.x0, b.y0, b.x1, b.y1); }

// Drawn primitives with ink inside the box (grown by `pad`).
std::vector<std::string> primitives_in(const std::vector<Stroke>& drawn, const BBox& b, double pad) {
  std::set<std::string> ids;
  for (const Stroke& s : drawn)
    for (Vec2 p : s.points)
      if (!s.id.empty() && p.x >= b.x0 - pad && p.x <= b.x1 + pad && p.y >= b.y0 - pad && p.y <= b.y1 + pad) {
        ids.insert(s.id);
        break;
      }
  return {ids.begin(), ids.end()};
}

void add_ids(AspectScore& a, const std::vector<std::string>& ids) {
  std::set<std::string> all(a.offending_primitive_ids.begin(), a.offending_primitive_ids.end());
  all.insert(ids.begin(), ids.end());
  a.offending_primitive_ids.assign(all.begin(), all.end());
}

struct Context {
  const std::vector<Stroke>& source;
  const std::vector<Stroke>& drawn;
  const Analysis& as;
  const Analysis& ad;
  double sw, tol;
  Ink src_ink, drawn_ink;
};

AspectScore closure(const Context& c) {
  AspectScore a;
  a.aspect = "closure";
  double total = 0, kept = 0;
  int lost = 0;
  std::string lost_text;
  for (const Hole& h : c.as.holes) {
    double best = 0;
    for (const Hole& d : c.ad.holes) best = std::max(best, hole_iou(h, d));
    const double credit = overlap_credit(best), w = hole_weight(h);
    total += w, kept += w * credit;
    if (credit < 1) {
      ++lost;
      a.affected_regions.push_back(h.box);
      add_ids(a, primitives_in(c.drawn, h.box, c.as.join_px));
      if (lost <= 5) lost_text += fmt::format("; region {} ({:.0f} px²) overlaps the drawing's best at IoU {:.2f}", box_text(h.box), h.area_px, best);
    }
  }
  a.score = total > 0 ? kept / total : 1;
  a.evidence.push_back(measured("regions_kept_weighted", a.score, ">=", 1, "ratio"));
  a.rationale = total > 0 ? fmt::format("{} of {} regions the source encloses are still enclosed (full credit at IoU >= 0.5, "
                                        "none at 0.2; weighted by the square root of their area){}",
                                        c.as.holes.size() - lost, c.as.holes.size(), lost_text)
                          : "the source encloses no region; nothing to keep";
  return a;
}

AspectScore negative_space(const Context& c) {
  AspectScore a;
  a.aspect = "negative_space";
  // Regions the drawing encloses that the source left open.
  double created = 0, kept_w = 0;
  for (const Hole& h : c.as.holes) kept_w += hole_weight(h);
  int made = 0;
  std::string text;
  for (const Hole& d : c.ad.holes) {
    double best = 0;
    for (const Hole& h : c.as.holes) best = std::max(best, hole_iou(d, h));
    const double bad = 1 - overlap_credit(best);
    if (bad <= 0) continue;
    created += hole_weight(d) * bad;
    ++made;
    a.affected_regions.push_back(d.box);
    add_ids(a, primitives_in(c.drawn, d.box, c.ad.join_px));
    if (made <= 5) text += fmt::format("; enclosed in the drawing only: {} ({:.0f} px²)", box_text(d.box), d.area_px);
  }
  // Gaps between source forms that come near without touching: still gaps in the drawing?
  const double far = 4 * c.sw;
  int gaps = 0, closed = 0;
  std::vector<Ink> form_ink;
  for (const Form& f : c.as.forms) {
    std::vector<Stroke> own;
    for (int s : f.strokes) own.push_back(c.source[s]);
    form_ink.emplace_back(own, c.sw / 2, c.sw, far);
  }
  for (size_t i = 0; i < c.as.forms.size(); ++i)
    for (size_t j = i + 1; j < c.as.forms.size(); ++j) {
      const Form &fi = c.as.forms[i], &fj = c.as.forms[j];
      if (fi.box.x0 > fj.box.x1 + far || fj.box.x0 > fi.box.x1 + far || fi.box.y0 > fj.box.y1 + far ||
          fj.box.y0 > fi.box.y1 + far)
        continue;
      // The nearest pair of points between the two forms.
      double bd = INFINITY;
      Vec2 pa, pb;
      for (const InkPoint& p : form_ink[i].points())
        if (const InkPoint* q = form_ink[j].nearest(p.p, far); q && dist(p.p, q->p) < bd)
          bd = dist(p.p, q->p), pa = p.p, pb = q->p;
      if (!(bd > c.as.join_px && bd <= far)) continue;
      // The middle half of the gap: paper in the source (else something stands between the two
      // forms), and inked over when drawn ink runs along all of it.
      Polyline middle = resample({pa + (pb - pa) * 0.25, pa + (pb - pa) * 0.75}, 1.0);
      if (std::any_of(middle.begin(), middle.end(), [&](Vec2 q) { return c.src_ink.nearest(q, 0.5 * c.as.join_px); }))
        continue;
      ++gaps;
      const InkPoint* mid = c.drawn_ink.nearest((pa + pb) * 0.5, c.tol);
      if (!mid || !std::all_of(middle.begin(), middle.end(), [&](Vec2 q) { return c.drawn_ink.nearest(q, c.tol); }))
        continue;
      ++closed;
      BBox b;
      b.add(pa), b.add(pb);
      a.affected_regions.push_back(b);
      add_ids(a, {c.drawn[mid->stroke].id});
      if (closed <= 5) text += fmt::format("; the {:.1f} px gap between source forms {} and {} at {} is inked over", bd,
                                           fi.number, fj.number, pt_text((pa + pb) * 0.5));
    }
  const double created_share = created > 0 ? created / (kept_w + created) : 0;
  const double gaps_kept = gaps > 0 ? double(gaps - closed) / gaps : 1;
  a.score = (1 - created_share) * gaps_kept;
  a.evidence.push_back(measured("created_enclosure_share", created_share, "<=", 0, "ratio"));
  a.evidence.push_back(measured("gaps_kept", gaps_kept, ">=", 1, "ratio"));
  a.rationale = fmt::format("{} region{} enclosed that the source leaves open (share {:.3f} of enclosed area, by square "
                            "root); {} of {} gaps between source forms ({:.1f} to {:.1f} px) kept open{}",
                            made, made == 1 ? "" : "s", created_share, gaps - closed, gaps, c.as.join_px, far, text);
  return a;
}

// Source forms matched to drawn forms: alike in length, nearest in place (greedy by cost).
std::vector<std::pair<int, int>> match_forms(const Analysis& as, const Analysis& ad, double min_len) {
  const double diag = std::max(1.0, bbox_diagonal(as.ink_box));
  std::vector<std::tuple<double, int, int>> cands;
  for (size_t i = 0; i < as.forms.size(); ++i) {
    if (as.forms[i].length_px < min_len) continue;
    for (size_t j = 0; j < ad.forms.size(); ++j) {
      const double r = ad.forms[j].length_px / std::max(1e-9, as.forms[i].length_px);
      const double d = dist(as.forms[i].centroid, ad.forms[j].centroid);
      if (r < 0.5 || r > 2 || d > 0.5 * diag) continue;
      cands.push_back({d / diag + std::abs(std::log(r)), int(i), int(j)});
    }
  }
  std::sort(cands.begin(), cands.end());
  std::vector<bool> used_s(as.forms.size()), used_d(ad.forms.size());
  std::vector<std::pair<int, int>> out;
  for (const auto& [cost, i, j] : cands) {
    if (used_s[i] || used_d[j]) continue;
    used_s[i] = used_d[j] = true;
    out.push_back({i, j});
  }
  return out;
}

AspectScore proportions(const Context& c) {
  AspectScore a;
  a.aspect = "proportions";
  const double min_len = 4 * c.sw, diag = std::max(1.0, bbox_diagonal(c.as.ink_box));
  // Error beyond the fidelity tolerance, relative to the container's size; none from 15 % up.
  const double limit = 0.15, kept_in_place = 0.9;
  std::map<int, int> matched;
  for (auto [i, j] : match_forms(c.as, c.ad, min_len)) matched[i] = j;
  double total = 0, got = 0;
  std::string text;
  int bad = 0, considered = 0;
  for (size_t i = 0; i < c.as.forms.size(); ++i) {
    const Form& s = c.as.forms[i];
    if (s.length_px < min_len) continue;
    total += s.length_px;
    ++considered;
    auto it = matched.find(int(i));
    double e = 1;
    std::string why;
    // Drawn where it stands (nearly all of it within the tolerance of drawn ink), whatever the
    // drawing's grouping of strokes there; else measured against its best-matching drawn form.
    int in_place = 0, samples = 0;
    for (int st : s.strokes)
      for (Vec2 p : resample(c.source[st].points, 1.0)) in_place += c.drawn_ink.nearest(p, c.tol) != nullptr, ++samples;
    if (samples > 0 && in_place >= kept_in_place * samples) {
      e = 0;
    } else if (it != matched.end()) {
      const Form& d = c.ad.forms[it->second];
      const double ref = s.parent >= 0 ? bbox_diagonal(c.as.forms[s.parent].box) : diag;
      const double moved = dist(s.centroid, d.centroid), resized = std::abs(bbox_diagonal(d.box) - bbox_diagonal(s.box));
      e = std::max(std::max(0.0, moved - c.tol), std::max(0.0, resized - c.tol)) / std::max(ref, 1.0);
      why = fmt::format("moved {:.1f} px, size changed {:.1f} px against {:.0f} px", moved, resized, ref);
      if (e > 0) add_ids(a, d.primitive_ids);
    } else {
      why = "no drawn form matches it";
    }
    const double sc = 1 - std::min(1.0, e / limit);
    got += s.length_px * sc;
    if (sc < 1) {
      ++bad;
      a.affected_regions.push_back(s.box);
      if (bad <= 5) text += fmt::format("; source form {} at {}: {}", s.number, box_text(s.box), why);
    }
  }
  a.score = total > 0 ? got / total : 1;
  a.evidence.push_back(measured("forms_kept", considered - bad, ">=", considered, "count"));
  a.rationale = total > 0 ? fmt::format("{} of {} source forms of {:.0f} px or more keep their place and size within the "
                                        "tolerance {:.1f} px ({:.0f}% of it drawn in place, else its best-matching drawn form's "
                                        "move and change of size count, the score falling to 0 at {:.0f}% of its container's "
                                        "size; weighted by length){}",
                                        considered - bad, considered,
                                        min_len, c.tol, kept_in_place * 100, limit * 100, text)
                          : "the source has no form long enough to compare";
  return a;
}

// Share of source samples p, symmetric in the source about (centre, normal), whose drawing keeps
// ink at both p and its mirror image.
struct SymmetryMeasure {
  double source_share = 0;  // of the samples considered, those the source itself mirrors
  int symmetric = 0, kept = 0;
  std::vector<Vec2> lost;  // source samples whose symmetry the drawing lost
};

SymmetryMeasure measure_symmetry(const Context& c, const Polyline& pts, Vec2 centre, Vec2 n) {
  SymmetryMeasure m;
  for (Vec2 p : pts) {
    const Vec2 q = reflect(p, centre, n);
    const InkPoint* mirrored = c.src_ink.nearest(q, c.tol);
    if (!mirrored) continue;
    ++m.symmetric;
    // As well as the source: drawn ink at the mirror image within the tolerance plus the
    // source's own departure from symmetry there.
    if (c.drawn_ink.nearest(p, c.tol) && c.drawn_ink.nearest(q, c.tol + dist(q, mirrored->p))) ++m.kept;
    else m.lost.push_back(p);
  }
  m.source_share = pts.empty() ? 0 : double(m.symmetric) / pts.size();
  return m;
}

AspectScore symmetry(const Context& c) {
  AspectScore a;
  a.aspect = "symmetry";
  Polyline all;
  for (const Stroke& s : c.source) {
    Polyline r = resample(s.points, 1.0);
    all.insert(all.end(), r.begin(), r.end());
  }
  struct Sym {
    std::string what;
    SymmetryMeasure m;
  };
  std::vector<Sym> syms;
  // The drawing's own axis: the best vertical and the best horizontal one near its centre.
  const double min_share = 0.9;
  const Vec2 mid{(c.as.ink_box.x0 + c.as.ink_box.x1) / 2, (c.as.ink_box.y0 + c.as.ink_box.y1) / 2};
  for (Vec2 n : {Vec2{1, 0}, Vec2{0, 1}}) {
    Sym best;
    Vec2 best_c;
    for (int k = -4; k <= 4; ++k) {
      const Vec2 ctr = mid + n * (k * 0.5 * c.sw);
      SymmetryMeasure m = measure_symmetry(c, all, ctr, n);
      if (m.source_share > best.m.source_share) best.m = m, best_c = ctr;
    }
    if (best.m.source_share >= min_share) {
      best.what = n.x != 0 ? fmt::format("the drawing's vertical axis x = {:.1f}", best_c.x)
                           : fmt::format("the drawing's horizontal axis y = {:.1f}", best_c.y);
      a.evidence.push_back(measured(n.x != 0 ? "source_mirrored_share_vertical" : "source_mirrored_share_horizontal",
                                    best.m.source_share, ">=", min_share, "ratio"));
      syms.push_back(best);
    }
  }
  // Mirror pairs of source forms.
  for (const Relationship& r : implied_relationships(c.as, nullptr)) {
    if (r.kind != "mirror") continue;
    const Vec2 p0{r.axis_or_anchor[0][0].get<double>(), r.axis_or_anchor[0][1].get<double>()};
    const Vec2 p1{r.axis_or_anchor[1][0].get<double>(), r.axis_or_anchor[1][1].get<double>()};
    Polyline pts;
    for (int num : r.forms)
      for (int s : c.as.forms[num - 1].strokes) {
        Polyline q = resample(c.source[s].points, 1.0);
        pts.insert(pts.end(), q.begin(), q.end());
      }
    Sym s{fmt::format("the mirror pair of source forms {} and {}", r.forms[0], r.forms[1]),
          measure_symmetry(c, pts, (p0 + p1) * 0.5, perp(unit(p1 - p0)))};
    syms.push_back(s);
  }
  if (syms.empty()) {
    a.score = 1;
    a.rationale = fmt::format("the source has no mirror symmetry to keep (no axis mirrors {:.0f}% of its ink, no mirror "
                              "pair of forms)", min_share * 100);
    return a;
  }
  // Each symmetry of the source is one thing to keep, whatever its size: a pair of dot eyes
  // counts as much as the outline's axis.
  double sum = 0;
  std::string text;
  std::vector<Vec2> lost;
  for (const Sym& s : syms) {
    sum += s.m.symmetric > 0 ? double(s.m.kept) / s.m.symmetric : 1;
    text += fmt::format("; {}: {} of {} mirrored source points kept", s.what, s.m.kept, s.m.symmetric);
    lost.insert(lost.end(), s.m.lost.begin(), s.m.lost.end());
  }
  // Where it was lost: the source forms holding a fifth or more of the lost points.
  std::map<int, int> lost_by_form;
  for (Vec2 p : lost)
    if (const InkPoint* q = c.src_ink.nearest(p, c.tol)) lost_by_form[c.as.form_of[q->stroke]]++;
  for (auto [f, count] : lost_by_form) {
    const Form& form = c.as.forms[f];
    if (count < 0.2 * std::max(1.0, form.length_px)) continue;
    BBox around = form.box;  // grown by the tolerance: a dot's box is a point
    around.add({form.box.x0 - c.tol, form.box.y0 - c.tol});
    around.add({form.box.x1 + c.tol, form.box.y1 + c.tol});
    a.affected_regions.push_back(around);
    add_ids(a, primitives_in(c.drawn, form.box, c.tol));
  }
  a.score = sum / syms.size();
  a.evidence.push_back(measured("symmetries_kept_mean", a.score, ">=", 1, "ratio"));
  a.rationale = fmt::format("the mean over the source's {} mirror symmetr{} of the share of its mirrored points that keep "
                            "ink at both in the drawing (within {:.1f} px){}",
                            syms.size(), syms.size() == 1 ? "y" : "ies", c.tol, text);
  return a;
}

AspectScore expressive_lines(const Context& c) {
  AspectScore a;
  a.aspect = "expressive_lines";
  const double min_len = 10 * c.sw, step = 0.5 * c.sw, reach = 2 * c.tol;
  const int k = 4;  // chords span k stations (two stroke widths) each way
  // Angle error allowed before a stroke loses credit: what drawn ink within the tolerance on
  // either side can turn a chord by; none from 25 degrees beyond it.
  const double allow_deg = rad2deg(std::atan(c.tol / (k * step))), none_deg = allow_deg + 25;
  // Robust to a thinning artefact at a corner: the worst tenth of a stroke's stations is left out.
  const double trim = 0.1;
  std::map<int, std::vector<double>> err;  // source stroke -> angle error per station
  std::map<int, std::set<std::string>> culprits;
  for (size_t si = 0; si < c.source.size(); ++si) {
    const Polyline& src = c.source[si].points;
    if (polyline_length(src) < min_len) continue;
    // The stroke's stations and where the drawing has them: the nearest drawn ink running the
    // same way. Directions are chords over the same stations on both sides, so the drawing is
    // read along the source's stroke whatever its primitives and junctions.
    const Polyline p = resample(src, step);
    const int n = int(p.size());
    std::vector<const InkPoint*> q(n, nullptr);
    for (int i = 0; i < n; ++i) {
      const Vec2 t = unit(p[std::min(n - 1, i + k)] - p[std::max(0, i - k)]);
      q[i] = c.drawn_ink.nearest(p[i], reach, &t, 45);
      if (!q[i]) q[i] = c.drawn_ink.nearest(p[i], reach);  // at a corner the drawing turns elsewhere
    }
    for (int i = 0; i < n; ++i) {
      const int i0 = std::max(0, i - k), i1 = std::min(n - 1, i + k);
      double e = 90;
      if (q[i0] && q[i1] && dist(q[i0]->p, q[i1]->p) > 1e-9) {
        const Vec2 ts = unit(p[i1] - p[i0]), td = unit(q[i1]->p - q[i0]->p);
        e = rad2deg(std::acos(std::clamp(dot(ts, td), -1.0, 1.0)));
      }
      // The drawn stroke that went its own way there (nearest, whatever its direction).
      if (e > allow_deg)
        if (const InkPoint* d = q[i] ? q[i] : c.drawn_ink.nearest(p[i], 2 * reach); d && !c.drawn[d->stroke].id.empty())
          culprits[int(si)].insert(c.drawn[d->stroke].id);
      err[int(si)].push_back(e);
    }
  }
  double total = 0, got = 0, worst = 0;
  int bad = 0;
  std::string text;
  for (auto& [s, e] : err) {
    std::sort(e.begin(), e.end());
    const size_t keep = e.size() - static_cast<size_t>(trim * e.size());
    double ss = 0;
    for (size_t i = 0; i < keep; ++i) ss += e[i] * e[i];
    const double len = polyline_length(c.source[s].points), rms = std::sqrt(ss / std::max<size_t>(1, keep));
    const double sc = 1 - std::clamp((rms - allow_deg) / (none_deg - allow_deg), 0.0, 1.0);
    worst = std::max(worst, rms);
    total += len, got += len * sc;
    if (sc < 1) {
      ++bad;
      BBox b;
      for (Vec2 p : c.source[s].points) b.add(p);
      a.affected_regions.push_back(b);
      add_ids(a, {culprits[s].begin(), culprits[s].end()});
      if (bad <= 5) text += fmt::format("; the source stroke at {} ({:.0f} px) turns differently: direction off by {:.1f} deg rms", box_text(b), len, rms);
    }
  }
  a.score = total > 0 ? got / total : 1;
  if (total > 0) a.evidence.push_back(measured("worst_stroke_direction_error", worst, "<=", allow_deg, "deg"));
  a.rationale = total > 0 ? fmt::format("{} of {} source strokes of {:.0f} px or more keep their direction along their length "
                                        "(every {:.1f} px, read over chords of {:.1f} px on both sides; full credit to {:.1f} deg rms over "
                                        "the best {:.0f}% of its stations, none from {:.1f} deg; weighted by length){}",
                                        err.size() - bad, err.size(), min_len, step, 2 * k * step, allow_deg, (1 - trim) * 100, none_deg, text)
                          : fmt::format("the source has no stroke of {:.0f} px or more", min_len);
  return a;
}

}  // namespace

const std::vector<std::string>& measured_aspects() {
  static const std::vector<std::string> a = {"proportions", "expressive_lines", "closure", "symmetry", "negative_space"};
  return a;
}

FidelityReport evaluate_fidelity(const std::vector<Stroke>& source, const std::vector<Stroke>& drawn, double sw,
                                 cv::Size image, double tol, const std::vector<std::string>& aspects) {
  FidelityReport rep;
  const Raster raster = raster_for({&source, &drawn}, image, sw);
  rep.source = analyze_forms(source, sw, raster);
  rep.drawn = analyze_forms(drawn, sw, raster);
  const double step = std::min(1.0, tol / 2);
  Context c{rep.source.strokes, rep.drawn.strokes, rep.source, rep.drawn, sw, tol,
            Ink(rep.source.strokes, step, 2 * sw, std::max(1.0, tol)), Ink(rep.drawn.strokes, step, 2 * sw, std::max(1.0, tol))};
  double sum = 0;
  int n = 0;
  for (const std::string& name : aspects) {
    AspectScore a;
    if (name == "closure") a = closure(c);
    else if (name == "negative_space") a = negative_space(c);
    else if (name == "proportions") a = proportions(c);
    else if (name == "symmetry") a = symmetry(c);
    else if (name == "expressive_lines") a = expressive_lines(c);
    else {
      a.aspect = name;
      a.scored = false;
      a.score = 0;
      a.rationale = name == "recognizability"
                        ? "whether a viewer names the same subject needs an oracle (a person or a vision "
                          "model), and geometry alone cannot tell"
                        : "not an aspect this tool knows";
    }
    a.score = round3(a.score);
    if (a.scored) sum += a.score, ++n;
    rep.aspects.push_back(a);
  }
  if (n > 0) rep.overall = round3(sum / n);
  return rep;
}

FidelityReport scene_fidelity(const Scene& s, const std::vector<Polyline>& reference, const Scope& scope,
                              const std::vector<std::string>& aspects) {
  const double sw = stroke_width_of(s);
  std::vector<Polyline> drawn_paths;
  std::vector<std::string> ids;
  for (const Stroke& st : scene_strokes(s))
    for (const Polyline& part : clip_to_scope({st.points}, scope)) drawn_paths.push_back(part), ids.push_back(st.id);
  std::vector<Stroke> drawn;
  for (size_t i = 0; i < drawn_paths.size(); ++i) drawn.push_back({ids[i], drawn_paths[i]});
  return evaluate_fidelity(plain_strokes(clip_to_scope(reference, scope)), drawn, sw, image_size(s),
                           default_tolerance(sw), aspects);
}

SemanticComparison compare_semantics(const std::vector<Stroke>& reference, const std::vector<Stroke>& candidate,
                                     double sw, cv::Size image, double tol) {
  SemanticComparison out;
  out.fidelity = evaluate_fidelity(reference, candidate, sw, image, tol, measured_aspects());
  const Analysis &r = out.fidelity.source, &c = out.fidelity.drawn;
  out.reference_forms = int(r.forms.size()), out.candidate_forms = int(c.forms.size());
  out.reference_closed_regions = int(r.holes.size()), out.candidate_closed_regions = int(c.holes.size());
  for (const Form& f : r.forms) out.roles[f.role].first++;
  for (const Form& f : c.forms) out.roles[f.role].second++;
  std::string roles;
  for (const auto& [role, counts] : out.roles)
    if (counts.first != counts.second) roles += fmt::format("{}{} {} -> {}", roles.empty() ? "" : ", ", role, counts.first, counts.second);
  std::string aspects;
  for (const AspectScore& a : out.fidelity.aspects) aspects += fmt::format("{}{} {:.3f}", aspects.empty() ? "" : ", ", a.aspect, a.score);
  out.summary = fmt::format("forms {} -> {}, closed regions {} -> {}; roles {}; aspects: {}", out.reference_forms,
                            out.candidate_forms, out.reference_closed_regions, out.candidate_closed_regions,
                            roles.empty() ? "unchanged" : roles, aspects);
  return out;
}

}  // namespace sv::semantic
