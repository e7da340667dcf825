#include "semantic/forms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <opencv2/imgproc.hpp>

#include "raster/image.hpp"

namespace sv::semantic {

namespace {

constexpr int kShift = 3;  // fractional bits of raster coordinates

struct UnionFind {
  std::vector<int> up;
  explicit UnionFind(size_t n) : up(n) { std::iota(up.begin(), up.end(), 0); }
  int find(int i) {
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
  }
  void join(int a, int b) {
    a = find(a), b = find(b);
    if (a != b) up[std::max(a, b)] = std::min(a, b);
  }
};

// Groups of the strokes `members` whose samples come within `reach` px of each other; `skip`
// (an index into strokes, or -1) takes no part. Returns a group number per member (-1 for skip).
std::vector<int> group_strokes(const std::vector<Polyline>& samples, const std::vector<int>& members, double reach,
                               int skip) {
  UnionFind uf(members.size());
  std::map<std::pair<long, long>, std::vector<std::pair<int, Vec2>>> grid;
  auto cell = [&](double v) { return static_cast<long>(std::floor(v / reach)); };
  for (size_t m = 0; m < members.size(); ++m) {
    if (members[m] == skip) continue;
    for (Vec2 p : samples[members[m]]) {
      const long cx = cell(p.x), cy = cell(p.y);
      for (long dx = -1; dx <= 1; ++dx)
        for (long dy = -1; dy <= 1; ++dy) {
          auto it = grid.find({cx + dx, cy + dy});
          if (it == grid.end()) continue;
          for (const auto& [other, q] : it->second)
            if (other != int(m) && dist(p, q) <= reach) uf.join(int(m), other);
        }
      grid[{cx, cy}].push_back({int(m), p});
    }
  }
  std::vector<int> out(members.size(), -1);
  for (size_t m = 0; m < members.size(); ++m)
    if (members[m] != skip) out[m] = uf.find(int(m));
  return out;
}

// Total absolute turning (deg) of a polyline read at chords of `step` px: a mark hardly turns.
double turning_deg(const Polyline& pl, double step) {
  Polyline r = resample(pl, step);
  double total = 0;
  for (size_t i = 2; i < r.size(); ++i) {
    Vec2 a = r[i - 1] - r[i - 2], b = r[i] - r[i - 1];
    if (norm(a) > 1e-9 && norm(b) > 1e-9) total += std::abs(std::atan2(cross(a, b), dot(a, b)));
  }
  return rad2deg(total);
}

// Closed regions of strokes drawn `thickness_px` wide inside the raster cell `area`.
std::vector<Hole> holes_in(const std::vector<const Polyline*>& polys, const Raster& r, cv::Rect area,
                           double thickness_px, double min_area_px) {
  area &= cv::Rect(0, 0, r.size.width, r.size.height);
  std::vector<Hole> out;
  if (area.width < 3 || area.height < 3) return out;
  cv::Mat ink(area.size(), CV_8U, cv::Scalar(0));
  const int thick = std::max(1, static_cast<int>(std::lround(thickness_px * r.scale)));
  for (const Polyline* pl : polys) {
    std::vector<cv::Point> pts;
    for (Vec2 p : *pl) {
      const Vec2 q = (p - r.origin) * r.scale;
      pts.push_back({static_cast<int>(std::lround((q.x - area.x) * (1 << kShift))),
                     static_cast<int>(std::lround((q.y - area.y) * (1 << kShift)))});
    }
    if (pts.size() == 1) pts.push_back(pts[0]);
    cv::polylines(ink, pts, false, cv::Scalar(255), thick, cv::LINE_8, kShift);
  }
  cv::Mat paper = 255 - ink, labels, stats, centroids;
  const int n = cv::connectedComponentsWithStats(paper, labels, stats, centroids, 4, CV_32S);
  for (int k = 1; k < n; ++k) {
    const int x = stats.at<int>(k, cv::CC_STAT_LEFT), y = stats.at<int>(k, cv::CC_STAT_TOP);
    const int w = stats.at<int>(k, cv::CC_STAT_WIDTH), h = stats.at<int>(k, cv::CC_STAT_HEIGHT);
    if (x == 0 || y == 0 || x + w == area.width || y + h == area.height) continue;  // reaches the outside
    const double a = stats.at<int>(k, cv::CC_STAT_AREA) / (r.scale * r.scale);
    if (a < min_area_px) continue;
    Hole hole;
    hole.area_px = a;
    hole.cell = cv::Rect(area.x + x, area.y + y, w, h);
    hole.mask = (labels(cv::Rect(x, y, w, h)) == k);
    hole.box.add(r.to_image(hole.cell.x - 0.5, hole.cell.y - 0.5));
    hole.box.add(r.to_image(hole.cell.x + w - 0.5, hole.cell.y + h - 0.5));
    hole.centroid = r.to_image(area.x + centroids.at<double>(k, 0), area.y + centroids.at<double>(k, 1));
    out.push_back(std::move(hole));
  }
  std::sort(out.begin(), out.end(), [](const Hole& a, const Hole& b) {
    return std::tie(a.cell.y, a.cell.x, a.area_px) < std::tie(b.cell.y, b.cell.x, b.area_px);
  });
  return out;
}

bool inside_hole(const Hole& h, cv::Point c) {
  if (!h.cell.contains(c)) return false;
  return h.mask.at<uchar>(c.y - h.cell.y, c.x - h.cell.x) != 0;
}

cv::Rect cell_box(const Raster& r, const BBox& b, double pad_px) {
  cv::Point a = r.to_cell({b.x0 - pad_px, b.y0 - pad_px}), c = r.to_cell({b.x1 + pad_px, b.y1 + pad_px});
  return cv::Rect(a, c + cv::Point(1, 1));
}

// Share of the form's samples within `reach` px of its bounding box's edges.
double border_fraction(const Form& f, const std::vector<Polyline>& samples, double reach) {
  double near = 0, all = 0;
  for (int s : f.strokes)
    for (Vec2 p : samples[s]) {
      const double d = std::min({p.x - f.box.x0, f.box.x1 - p.x, p.y - f.box.y0, f.box.y1 - p.y});
      near += d <= reach, all += 1;
    }
  return all > 0 ? near / all : 0;
}

// Forms: the strokes each group (by `group`) gathers, with their extent, length and centroid,
// largest first; and the whole ink's.
void gather_forms(Analysis& a, const std::vector<int>& group) {
  std::map<int, std::vector<int>> members;
  for (size_t i = 0; i < group.size(); ++i) members[group[i]].push_back(int(i));
  for (auto& [g, ids] : members) {
    Form f;
    f.strokes = ids;
    double sx = 0, sy = 0;
    for (int s : ids) {
      const Polyline& pl = a.strokes[s].points;
      for (Vec2 p : pl) f.box.add(p);
      for (size_t k = 1; k < pl.size(); ++k) {
        const double l = dist(pl[k - 1], pl[k]);
        const Vec2 m = (pl[k - 1] + pl[k]) * 0.5;
        sx += m.x * l, sy += m.y * l, f.length_px += l;
      }
      if (!a.strokes[s].id.empty()) f.primitive_ids.push_back(a.strokes[s].id);
    }
    f.centroid = f.length_px > 0 ? Vec2{sx / f.length_px, sy / f.length_px}
                                 : Vec2{(f.box.x0 + f.box.x1) / 2, (f.box.y0 + f.box.y1) / 2};
    std::sort(f.primitive_ids.begin(), f.primitive_ids.end());
    f.primitive_ids.erase(std::unique(f.primitive_ids.begin(), f.primitive_ids.end()), f.primitive_ids.end());
    a.forms.push_back(std::move(f));
  }
  std::sort(a.forms.begin(), a.forms.end(), [](const Form& x, const Form& y) {
    return std::make_tuple(-x.length_px, x.box.x0, x.box.y0) < std::make_tuple(-y.length_px, y.box.x0, y.box.y0);
  });
  a.form_of.assign(a.strokes.size(), -1);
  double sx = 0, sy = 0;
  for (size_t i = 0; i < a.forms.size(); ++i) {
    Form& f = a.forms[i];
    f.number = int(i) + 1;
    for (int s : f.strokes) a.form_of[s] = int(i);
    a.ink_box.add({f.box.x0, f.box.y0});
    a.ink_box.add({f.box.x1, f.box.y1});
    sx += f.centroid.x * f.length_px, sy += f.centroid.y * f.length_px;
    a.ink_length_px += f.length_px;
  }
  a.ink_centroid = a.ink_length_px > 0 ? Vec2{sx / a.ink_length_px, sy / a.ink_length_px} : Vec2{};
}

// Closed regions: of each form alone (for containment) and of the whole drawing.
void find_holes(Analysis& a, const Raster& raster, const FormParams& P) {
  const double sw = a.sw;
  const double min_hole = P.min_hole_sw2 * sw * sw;
  for (Form& f : a.forms) {
    std::vector<const Polyline*> polys;
    for (int s : f.strokes) polys.push_back(&a.strokes[s].points);
    f.holes = holes_in(polys, raster, cell_box(raster, f.box, a.join_px + 2), a.join_px, min_hole);
    f.closed = !f.holes.empty();
  }
  {
    std::vector<const Polyline*> polys;
    for (const Stroke& s : a.strokes) polys.push_back(&s.points);
    a.holes = holes_in(polys, raster, cv::Rect(0, 0, raster.size.width, raster.size.height), a.join_px, min_hole);
  }
}

// Containment: the innermost closed region holding nearly all of a form's samples.
void nest_forms(Analysis& a, const std::vector<Polyline>& samples, const Raster& raster, const FormParams& P) {
  for (size_t j = 0; j < a.forms.size(); ++j) {
    Form& inner = a.forms[j];
    double best_area = INFINITY;
    for (size_t i = 0; i < a.forms.size(); ++i) {
      const Form& outer = a.forms[i];
      if (i == j || !outer.closed || outer.box.x0 > inner.box.x0 || outer.box.y0 > inner.box.y0 ||
          outer.box.x1 < inner.box.x1 || outer.box.y1 < inner.box.y1)
        continue;
      for (const Hole& h : outer.holes) {
        if (h.area_px >= best_area) continue;
        int in = 0, n = 0;
        for (int s : inner.strokes)
          for (Vec2 p : samples[s]) in += inside_hole(h, raster.to_cell(p)), ++n;
        if (n > 0 && in >= P.inside_fraction * n) best_area = h.area_px, inner.parent = int(i), inner.inside_share = double(in) / n;
      }
    }
  }
  for (size_t j = 0; j < a.forms.size(); ++j)
    if (a.forms[j].parent >= 0) a.forms[a.forms[j].parent].children.push_back(int(j));
}

// How much each form's strokes turn, each measured over an eighth of the form's length (a stroke
// width at least).
std::vector<double> turning_of_forms(const Analysis& a) {
  std::vector<double> turn(a.forms.size(), 0);
  for (size_t i = 0; i < a.forms.size(); ++i) {
    const Form& f = a.forms[i];
    for (int s : f.strokes) turn[i] += turning_deg(a.strokes[s].points, std::max(a.sw, f.length_px / 8));
  }
  return turn;
}

// Texture: clusters of short marks that hardly turn and have neighbours of about their length.
// Each form's texture (-1: none).
std::vector<int> find_textures(Analysis& a, const std::vector<double>& turn, const FormParams& P) {
  const double sw = a.sw;
  std::vector<int> marks;
  const double drawing_diag = bbox_diagonal(a.ink_box);
  for (size_t i = 0; i < a.forms.size(); ++i) {
    const Form& f = a.forms[i];
    if (!f.closed && f.strokes.size() <= 2 && turn[i] <= P.mark_max_turn_deg && f.length_px > sw &&
        f.length_px <= 0.25 * drawing_diag)
      marks.push_back(int(i));
  }
  {
    UnionFind uf(marks.size());
    for (size_t x = 0; x < marks.size(); ++x)
      for (size_t y = x + 1; y < marks.size(); ++y) {
        const Form &fa = a.forms[marks[x]], &fb = a.forms[marks[y]];
        if (fa.parent != fb.parent) continue;
        const double lo = std::min(fa.length_px, fb.length_px), hi = std::max(fa.length_px, fb.length_px);
        if (hi <= P.texture_length_ratio * lo && dist(fa.centroid, fb.centroid) <= P.texture_reach * hi)
          uf.join(int(x), int(y));
      }
    std::map<int, std::vector<int>> clusters;
    for (size_t x = 0; x < marks.size(); ++x) clusters[uf.find(int(x))].push_back(marks[x]);
    for (auto& [k, c] : clusters)
      if (int(c.size()) >= P.texture_min_marks) a.textures.push_back(c);
  }
  std::vector<int> texture_of(a.forms.size(), -1);
  for (size_t t = 0; t < a.textures.size(); ++t)
    for (int i : a.textures[t]) texture_of[i] = int(t);
  return texture_of;
}

// Shared baselines: siblings side by side, bottoms level, heights alike, gaps under a letter's
// height or so.
// Each form's row (-1: none).
std::vector<int> find_baselines(Analysis& a, const std::vector<int>& texture_of, const FormParams& P) {
  const double sw = a.sw;
  std::vector<int> row_of(a.forms.size(), -1);
  {
    std::vector<int> cand;
    for (size_t i = 0; i < a.forms.size(); ++i)
      if (texture_of[i] < 0 && a.forms[i].children.empty()) cand.push_back(int(i));
    std::sort(cand.begin(), cand.end(), [&](int x, int y) {
      return std::make_pair(a.forms[x].box.x0, x) < std::make_pair(a.forms[y].box.x0, y);
    });
    for (size_t start = 0; start < cand.size(); ++start) {
      if (row_of[cand[start]] >= 0) continue;
      std::vector<int> row{cand[start]};
      const Form& first = a.forms[cand[start]];
      const double h = std::max(first.box.height(), sw);
      const double tol = std::max(P.baseline_sw * sw, 0.2 * h);
      for (size_t k = start + 1; k < cand.size(); ++k) {
        const Form& f = a.forms[cand[k]];
        const Form& last = a.forms[row.back()];
        if (row_of[cand[k]] >= 0 || f.parent != first.parent) continue;
        const double fh = std::max(f.box.height(), sw);
        const double gap = f.box.x0 - last.box.x1;
        const double overlap = -gap / std::max(1.0, std::min(f.box.width(), last.box.width()));
        if (std::abs(f.box.y1 - first.box.y1) <= tol && fh <= 3 * h && h <= 3 * fh && overlap <= 0.3 &&
            gap <= P.baseline_gap_heights * h)
          row.push_back(cand[k]);
        else if (gap > P.baseline_gap_heights * h)
          break;
      }
      if (int(row.size()) >= P.baseline_min_forms) {
        for (int i : row) row_of[i] = int(a.rows.size());
        a.rows.push_back({row, first.box.y1, tol});
      }
    }
  }
  return row_of;
}

// Roles, most specific first; outer forms before the forms inside them (a frame's contents
// are not its interior features).
void assign_roles(Analysis& a, const std::vector<Polyline>& samples, const std::vector<double>& turn,
                  const std::vector<int>& texture_of, const std::vector<int>& row_of, const FormParams& P) {
  const double sw = a.sw, drawing_diag = bbox_diagonal(a.ink_box);
  std::vector<int> depth(a.forms.size(), 0), order(a.forms.size());
  for (size_t i = 0; i < a.forms.size(); ++i)
    for (int p = a.forms[i].parent; p >= 0; p = a.forms[p].parent) ++depth[i];
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return depth[x] < depth[y]; });
  for (int i : order) {
    Form& f = a.forms[i];
    const bool top = f.parent < 0;
    std::vector<Evidence>& ev = f.evidence;
    if (texture_of[i] >= 0) {
      const auto& c = a.textures[texture_of[i]];
      f.role = "texture";
      ev.push_back(measured("similar_marks", double(c.size()), ">=", P.texture_min_marks, "count"));
      ev.push_back(measured("turning", turn[i], "<=", P.mark_max_turn_deg, "deg"));
      ev.push_back(measured("length", f.length_px / sw, "<=", 0.25 * drawing_diag / sw, "sw"));
    } else if (row_of[i] >= 0) {
      f.role = "annotation";
      ev.push_back(measured("forms_on_baseline", double(a.rows[row_of[i]].forms.size()), ">=", P.baseline_min_forms, "count"));
    } else if (top && !f.children.empty() &&
               border_fraction(f, samples, P.border_reach_sw * sw) >= P.frame_border_fraction) {
      f.role = "frame";
      ev.push_back(measured("border_fraction", border_fraction(f, samples, P.border_reach_sw * sw), ">=",
                            P.frame_border_fraction, "ratio"));
      ev.push_back(measured("forms_inside", double(f.children.size()), ">=", 1, "count"));
    } else if (!top && a.forms[f.parent].role != "frame") {
      f.role = "interior_feature";
      ev.push_back(measured("inside_share", f.inside_share, ">=", P.inside_fraction, "ratio"));
    } else {
      const double len_share = a.ink_length_px > 0 ? f.length_px / a.ink_length_px : 1;
      const double size_share = drawing_diag > 0 ? bbox_diagonal(f.box) / drawing_diag : 1;
      if (a.forms.size() > 1 && len_share <= P.decoration_length_share && size_share <= P.decoration_size_share) {
        f.role = "decoration";
        ev.push_back(measured("length_share", len_share, "<=", P.decoration_length_share, "ratio"));
        ev.push_back(measured("size_share", size_share, "<=", P.decoration_size_share, "ratio"));
      } else {
        f.role = "silhouette";
        ev.push_back(measured(len_share > P.decoration_length_share ? "length_share" : "size_share",
                              len_share > P.decoration_length_share ? len_share : size_share, ">",
                              len_share > P.decoration_length_share ? P.decoration_length_share
                                                                    : P.decoration_size_share,
                              "ratio"));
      }
    }
    f.confidence = confidence_of(ev);
  }
}

}  // namespace

std::string Evidence::text() const {
  return fmt::format("{} {:.3g}{} {} {:.3g}{}", measure, value, unit == "sw" ? " sw" : "", op, threshold,
                     unit == "sw" ? " sw" : "");
}

json Evidence::to_json() const {
  return {{"measure", measure}, {"value", round3(value)}, {"op", op}, {"threshold", round3(threshold)},
          {"unit", unit}, {"passed", passed}};
}

double confidence_of(const std::vector<Evidence>& ev) {
  double c = 1;
  for (const Evidence& e : ev) {
    // A share at least some threshold can only pass it by what is left up to 1.
    const bool share_above = e.unit == "ratio" && (e.op == ">=" || e.op == ">") && e.threshold < 1;
    const double scale = std::max(share_above ? 1 - e.threshold : std::abs(e.threshold), 1e-9);
    c = std::min(c, 0.5 + 0.5 * std::min(1.0, std::abs(e.value - e.threshold) / scale));
  }
  return round3(c);
}

Evidence measured(const std::string& measure, double value, const std::string& op, double threshold,
                  const std::string& unit) {
  bool ok = op == ">=" ? value >= threshold : op == "<=" ? value <= threshold : op == "<" ? value < threshold
                                                                                          : value > threshold;
  return {measure, value, op, threshold, unit, ok};
}

cv::Point Raster::to_cell(Vec2 p) const {
  const Vec2 q = (p - origin) * scale;
  return {static_cast<int>(std::lround(q.x)), static_cast<int>(std::lround(q.y))};
}

Vec2 Raster::to_image(double cx, double cy) const { return origin + Vec2{cx, cy} / scale; }

std::vector<Stroke> drawn_strokes(const Drawing& d) {
  std::vector<Stroke> out;
  for (const auto& [id, path] : d.pieces)
    if (!path.empty()) out.push_back({id, path});
  return out;
}

std::vector<Stroke> plain_strokes(const std::vector<Polyline>& paths) {
  std::vector<Stroke> out;
  for (const auto& p : paths)
    if (!p.empty()) out.push_back({"", p});
  return out;
}

std::vector<Stroke> scene_strokes(const Scene& s) { return drawn_strokes(drawing_of(s)); }

cv::Size image_size(const Scene& s) {
  if (s.source && s.source->width > 0 && s.source->height > 0) return {s.source->width, s.source->height};
  BBox b;
  if (s.primitives)
    for (const auto& p : *s.primitives)
      for (Vec2 q : p.shape.sample(2.0)) b.add(q);
  return b.empty() ? cv::Size(1, 1) : cv::Size(static_cast<int>(std::ceil(std::max(0.0, b.x1))) + 1,
                                                static_cast<int>(std::ceil(std::max(0.0, b.y1))) + 1);
}

Analysis scene_forms(const Scene& s, const FormParams& params) {
  std::vector<Stroke> strokes = scene_strokes(s);
  const double sw = stroke_width_of(s);
  const Raster r = raster_for({&strokes}, image_size(s), sw);
  return analyze_forms(std::move(strokes), sw, r, params);
}

Polyline resample(const Polyline& pl, double step) {
  if (pl.size() < 2) return pl;
  Polyline out{pl.front()};
  for (size_t i = 1; i < pl.size(); ++i) {
    const double len = dist(pl[i - 1], pl[i]);
    const int n = std::max(1, static_cast<int>(std::ceil(len / step)));
    for (int k = 1; k <= n; ++k) out.push_back(pl[i - 1] + (pl[i] - pl[i - 1]) * (double(k) / n));
  }
  return out;
}

double bbox_diagonal(const BBox& b) { return b.empty() ? 0 : std::hypot(b.width(), b.height()); }

double hole_iou(const Hole& a, const Hole& b) {
  const cv::Rect both = a.cell & b.cell;
  if (both.empty()) return 0;
  const cv::Mat ma = a.mask(both - a.cell.tl()), mb = b.mask(both - b.cell.tl());
  const double inter = cv::countNonZero(ma & mb);
  const double ua = cv::countNonZero(a.mask), ub = cv::countNonZero(b.mask);
  return inter / (ua + ub - inter);
}

Raster raster_for(const std::vector<const std::vector<Stroke>*>& sets, cv::Size image, double sw) {
  BBox b;
  b.add({-0.5, -0.5});
  b.add({image.width - 0.5, image.height - 0.5});
  for (const auto* set : sets)
    for (const Stroke& s : *set)
      for (Vec2 p : s.points) b.add(p);
  Raster r;
  const double pad = 2 * sw + 2;
  // Fine enough that a closed region a few stroke widths across keeps its shape; coarser when
  // the strokes reach far around the page, so no raster has more pixels than the largest image.
  r.scale = std::clamp(512.0 / std::max({b.width(), b.height(), 1.0}), 1.0, 4.0);
  r.scale = std::min(r.scale, std::sqrt(kMaxImagePixels / ((b.width() + 2 * pad) * (b.height() + 2 * pad))));
  r.origin = {b.x0 - pad, b.y0 - pad};
  r.size = {static_cast<int>(std::ceil((b.width() + 2 * pad) * r.scale)) + 1,
            static_cast<int>(std::ceil((b.height() + 2 * pad) * r.scale)) + 1};
  return r;
}

Analysis analyze_forms(std::vector<Stroke> strokes, double sw, const Raster& raster, const FormParams& P) {
  Analysis a;
  a.sw = sw;
  a.join_px = P.join_sw * sw;
  a.strokes = std::move(strokes);
  a.raster = raster;
  const double step = std::min(1.0, a.join_px / 3);
  std::vector<Polyline> samples;
  for (const Stroke& s : a.strokes) samples.push_back(resample(s.points, step));
  std::vector<int> all(a.strokes.size());
  std::iota(all.begin(), all.end(), 0);
  gather_forms(a, group_strokes(samples, all, a.join_px, -1));
  find_holes(a, raster, P);
  nest_forms(a, samples, raster, P);
  const std::vector<double> turn = turning_of_forms(a);
  const std::vector<int> texture_of = find_textures(a, turn, P);
  const std::vector<int> row_of = find_baselines(a, texture_of, P);
  assign_roles(a, samples, turn, texture_of, row_of, P);
  label_forms(a);
  return a;
}

void label_forms(Analysis& a) {
  // No oracle is consulted here: the label says what geometry knows and that no one named it.
  for (Form& f : a.forms) {
    std::string what = f.closed ? "closed" : "open";
    if (!f.children.empty())
      what += fmt::format(", contains {} form{}", f.children.size(), f.children.size() == 1 ? "" : "s");
    else
      what += fmt::format(", {} stroke{}", f.strokes.size(), f.strokes.size() == 1 ? "" : "s");
    if (f.parent >= 0) what += fmt::format(", inside form {}", a.forms[f.parent].number);
    f.label = fmt::format("form {}: {}", f.number, what);
    f.labelled_by = "geometry";
  }
}

std::vector<PrimitiveRole> primitive_roles(const Analysis& a) {
  std::map<std::string, PrimitiveRole> out;
  const double step = std::min(1.0, a.join_px / 3);
  std::vector<Polyline> samples;
  for (const Stroke& s : a.strokes) samples.push_back(resample(s.points, step));
  for (const Form& f : a.forms) {
    for (int s : f.strokes) {
      const std::string& id = a.strokes[s].id;
      if (id.empty() || out.count(id)) continue;
      out[id] = {id, f.role, f.number, f.confidence, f.evidence};
    }
    // Connectors: a stroke whose removal leaves two parts, each at least as long as the stroke,
    // that it touches at its two ends (a limb between body and hand). Large forms are skipped:
    // the test is quadratic in their strokes.
    if (f.strokes.size() < 3 || f.strokes.size() > 150 || f.role == "texture" || f.role == "annotation") continue;
    for (int s : f.strokes) {
      const std::string& id = a.strokes[s].id;
      if (id.empty() || samples[s].size() < 2) continue;
      const std::vector<int> g = group_strokes(samples, f.strokes, a.join_px, s);
      std::map<int, double> part_len;
      for (size_t m = 0; m < f.strokes.size(); ++m)
        if (g[m] >= 0) part_len[g[m]] += polyline_length(a.strokes[f.strokes[m]].points);
      if (part_len.size() < 2) continue;
      const double own = polyline_length(a.strokes[s].points);
      auto part_at = [&](Vec2 end) {
        int best = -1;
        double bd = a.join_px;
        for (size_t m = 0; m < f.strokes.size(); ++m) {
          if (g[m] < 0) continue;
          for (Vec2 q : samples[f.strokes[m]])
            if (dist(q, end) <= bd) bd = dist(q, end), best = g[m];
        }
        return best;
      };
      const int p0 = part_at(samples[s].front()), p1 = part_at(samples[s].back());
      if (p0 < 0 || p1 < 0 || p0 == p1) continue;
      const double smaller = std::min(part_len[p0], part_len[p1]);
      if (smaller < own) continue;
      std::vector<Evidence> ev{measured("parts_joined", double(part_len.size()), ">=", 2, "count"),
                               measured("smaller_part_over_stroke_length", smaller / std::max(own, 1e-9), ">=", 1,
                                        "ratio")};
      out[id] = {id, "connector", f.number, confidence_of(ev), ev};
    }
  }
  std::vector<PrimitiveRole> list;
  for (auto& [id, r] : out) list.push_back(r);
  return list;
}

}  // namespace sv::semantic
