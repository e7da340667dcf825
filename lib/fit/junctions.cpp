#include "fit/junctions.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "fit/primitive_fit.hpp"

namespace sv::fitting {

void straighten_junctions(const Graph& g, std::vector<std::vector<FittedPiece>>& fitted, const FitParams& p) {
  constexpr size_t kMaxBent = 2;        // short pieces between a junction and its line
  constexpr double kMaxBentWidths = 3;  // their length, in stroke widths
  struct Leg {
    size_t edge;
    bool at_start;
    size_t bent;  // pieces before the line, from the junction
  };
  std::map<std::string, std::vector<Leg>> legs;
  std::map<std::string, bool> usable;
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge& e = g.edges[k];
    const auto& pcs = fitted[k];
    for (bool at_start : {true, false}) {
      const std::string& v = at_start ? e.v0 : e.v1;
      usable.try_emplace(v, true);
      if (pcs.empty() || e.closed || e.v0 == e.v1) {
        usable[v] = false;
        continue;
      }
      auto piece = [&](size_t j) -> const FittedPiece& { return at_start ? pcs[j] : pcs[pcs.size() - 1 - j]; };
      // The longest line among the pieces nearest the junction, what comes before it short.
      std::optional<Leg> leg;
      double before = 0, longest = 0;
      for (size_t j = 0; j < pcs.size() && j <= kMaxBent; ++j) {
        const Shape& sh = piece(j).shape;
        const bool short_before = before <= kMaxBentWidths * 2 * p.corner_cut_px;
        if (sh.type == PrimType::line && sh.length() > longest && short_before) {
          leg = Leg{k, at_start, j};
          longest = sh.length();
        }
        before += sh.length();
      }
      if (leg) legs[v].push_back(*leg);
      else usable[v] = false;
    }
  }
  for (const Vertex& v : g.vertices) {
    auto it = legs.find(v.id);
    if (v.degree < 3 || !usable[v.id] || it == legs.end() || it->second.size() != static_cast<size_t>(v.degree))
      continue;
    const std::vector<Leg>& ls = it->second;
    auto line_of = [&](const Leg& l) {
      const auto& pcs = fitted[l.edge];
      return (l.at_start ? pcs[l.bent] : pcs[pcs.size() - 1 - l.bent]).shape;
    };
    bool bent = false;
    for (const Leg& l : ls) bent = bent || l.bent > 0;
    if (!bent) continue;
    // A stroke running on through the junction (two legs in line) is merge_through_strokes'
    // to join; the junction stays where the trace put it.
    auto away = [&](const Leg& l) {
      const Shape sh = line_of(l);
      return l.at_start ? unit(sh.p1 - sh.p0) : unit(sh.p0 - sh.p1);
    };
    bool through = false;
    for (size_t i = 0; i < ls.size(); ++i)
      for (size_t j = i + 1; j < ls.size(); ++j)
        through = through || dot(away(ls[i]), away(ls[j])) < -std::cos(deg2rad(p.through_angle_deg));
    if (through) continue;
    // The point nearest every line (least squares over their normals).
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
    for (const Leg& l : ls) {
      const Shape sh = line_of(l);
      const Vec2 n = perp(unit(sh.p1 - sh.p0));
      const double c = dot(n, sh.p0);
      a11 += n.x * n.x, a12 += n.x * n.y, a22 += n.y * n.y, b1 += n.x * c, b2 += n.y * c;
    }
    const double det = a11 * a22 - a12 * a12;
    if (det < 1e-6) continue;
    const Vec2 x{(a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det};
    if (dist(x, v.p) > 2 * p.corner_cut_px) continue;
    bool fits = true;
    for (const Leg& l : ls) {
      const Shape sh = line_of(l);
      if (std::abs(dot(perp(unit(sh.p1 - sh.p0)), x - sh.p0)) > p.tolerance_px) fits = false;
    }
    if (!fits) continue;
    // The lines as they would be, and the bent pieces' points against them.
    std::vector<FittedPiece> straight;
    for (const Leg& l : ls) {
      const auto& pcs = fitted[l.edge];
      const Polyline& pts = g.edges[l.edge].points;
      const FittedPiece& line = l.at_start ? pcs[l.bent] : pcs[pcs.size() - 1 - l.bent];
      FittedPiece s = line;
      if (l.at_start) {
        s.shape = Shape::line(x, line.shape.p1);
        s.span0 = pcs.front().span0;
      } else {
        s.shape = Shape::line(line.shape.p0, x);
        s.span1 = pcs.back().span1;
      }
      const int from = l.at_start ? s.span0 : line.span1, to = l.at_start ? line.span0 : s.span1;
      for (int i = from; i <= to && fits; ++i) fits = s.shape.distance_to(pts[i]) <= p.corner_cut_px;
      const auto d = deviation(s.shape, Points(pts).subspan(s.span0, s.span1 - s.span0 + 1));
      s.rms_px = d.rms, s.max_px = d.max;
      straight.push_back(s);
    }
    if (!fits) continue;
    for (size_t i = 0; i < ls.size(); ++i) {
      auto& pcs = fitted[ls[i].edge];
      if (ls[i].at_start) {
        pcs.erase(pcs.begin(), pcs.begin() + static_cast<std::ptrdiff_t>(ls[i].bent));
        pcs.front() = straight[i];
      } else {
        pcs.erase(pcs.end() - static_cast<std::ptrdiff_t>(ls[i].bent), pcs.end());
        pcs.back() = straight[i];
      }
    }
  }
}

}  // namespace sv::fitting
