#include "graph/junctions.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "raster/profile.hpp"

namespace sv::graph {
namespace {

// Pull of the junction point towards the nodes' centroid, relative to one arm line: keeps
// the least-squares point defined when the arms are nearly parallel.
constexpr double kCentroidWeight = 0.1;
constexpr double kBarMaxTurnDeg = 15;  // two arms of a 3-way junction this straight are a T's bar
// An arm's direction is measured over up to kArmWindowsMax windows while it runs straight:
// a parabola stays within kArmCornerPx of its trace, and a line within kArmBendPx or within
// kArmBendRatio times the parabola's distance.
constexpr int kArmWindowsMax = 4;
constexpr double kArmCornerPx = 0.6;
constexpr double kArmBendPx = 0.05;
constexpr double kArmBendRatio = 2;
// Where two strokes leave a junction at an acute angle they share their ink for a while, and
// thinning bends the arms there: placing a junction, an arm none of whose nearer starts runs
// straight beyond one window may begin up to kMergedStartWindows windows past its clean start,
// where its trace keeps within kArmCornerPx of one line for kLongRunWindows windows (the
// curved arms of script and icons, straight enough over a few noisy windows, do not).
constexpr int kMergedStartWindows = 2;
constexpr int kLongRunWindows = 6;
// An arc a stem runs along is fitted to kArcOwnWidths widths of its own ink on either side, each
// lying kArcBendRatio times nearer the circle than the line through it (it bends as the arc does).
constexpr double kArcOwnWidths = 4;
constexpr double kArcBendRatio = 2;
// An arm that bends is fitted its circle from kArcSkipWidths past where its own stroke begins:
// the shared ink still pulls its first width outwards, and a circle carried back over the
// shared stretch magnifies that.
constexpr double kArcSkipWidths = 1;

// Arms paired up through a crossing, by index.
using Pairing = std::vector<std::pair<int, int>>;

// An arm of a junction: where its own stroke begins, and its direction there, as a line.
struct Arm {
  End end;
  bool ok = false;
  double clean_from = 0;  // arc length from the junction to where the arm's own stroke begins
  Vec2 anchor;            // a point on the line
  Vec2 dir;               // unit, pointing away from the junction
};

// Arc length at which the arm's own stroke begins: the first point after which, for
// `clean_run` px, every cross-section was measured and is no wider than clean_width_ratio
// times the arm's typical width. Nearer the junction the ink is shared with the other arms
// and thinning has bent the skeleton. Not found within `limit`: -1.
double clean_start(const Trace& t, const std::vector<double>& s, double limit, const JunctionOptions& opt) {
  const double max_width = opt.clean_width_ratio * median_width(t, std::numeric_limits<double>::infinity(), 0);
  size_t run_start = 0;
  bool in_run = false;
  for (size_t i = 0; i < t.pts.size() && s[i] <= limit + opt.clean_run; ++i) {
    bool clean = !std::isnan(t.width[i]) && t.width[i] <= max_width;
    if (!clean) {
      in_run = false;
      continue;
    }
    if (!in_run) run_start = i, in_run = true;
    if (s[i] - s[run_start] >= opt.clean_run) return s[run_start] <= limit ? s[run_start] : -1;
  }
  return -1;
}

// The largest distances of `pts` from `line` and from the parabola fitted to them over it
// (least squares, on the 3x3 normal equations).
std::pair<double, double> straightness(const std::vector<Vec2>& pts, const Line& line) {
  const Vec2 normal = perp(line.dir);
  cv::Matx33d ata = cv::Matx33d::zeros();
  cv::Vec3d atv = cv::Vec3d::all(0), c = cv::Vec3d::all(0);
  for (Vec2 p : pts) {
    const double u = dot(p - line.anchor, line.dir), v = dot(p - line.anchor, normal);
    const cv::Vec3d row(1, u, u * u);
    ata += row * row.t();
    atv += v * row;
  }
  if (pts.size() >= 4 && !cv::solve(ata, atv, c, cv::DECOMP_CHOLESKY)) c = cv::Vec3d::all(0);
  double line_off = 0, curve_off = 0;
  for (Vec2 p : pts) {
    const double u = dot(p - line.anchor, line.dir), v = dot(p - line.anchor, normal);
    line_off = std::max(line_off, std::abs(v));
    curve_off = std::max(curve_off, std::abs(v - (c[0] + c[1] * u + c[2] * u * u)));
  }
  return {line_off, curve_off};
}

// The line along the trace from arc length `from`: fitted (principal axis) to one window
// of arm_window px, grown a window at a time while the trace runs straight along it, that is
// while a line follows it about as well as a parabola does (no bend) and the parabola follows
// it closely (no corner). A few pixels give the direction of a wobbly trace only to some ten
// degrees. Returns the windows taken (0: too few points).
int straight_run(const Trace& t, const std::vector<double>& s, double from, double length, const JunctionOptions& opt,
                 int windows, Line& line) {
  int taken = 0;
  std::vector<Vec2> pts;
  size_t i = std::lower_bound(s.begin(), s.end(), from) - s.begin();
  for (int k = 1; k <= windows; ++k) {
    const double to = std::min(from + k * opt.arm_window, length);
    for (; i < t.pts.size() && s[i] <= to; ++i) pts.push_back(t.pts[i]);
    if (pts.size() < 2) break;
    const Line fit = principal_axis(pts);
    if (taken > 0) {
      const auto [line_off, curve_off] = straightness(pts, fit);
      if (curve_off > kArmCornerPx || (line_off > kArmBendPx && line_off > kArmBendRatio * curve_off)) break;
    }
    line = fit, taken = k;
    if (to >= length) break;
  }
  return taken;
}

// Whether the trace between arc lengths `from` and `to` (within `length`) stays within
// kArmCornerPx of one line.
bool runs_straight(const Trace& t, const std::vector<double>& s, double from, double to, double length) {
  if (to > length) return false;
  std::vector<Vec2> pts;
  for (size_t i = std::lower_bound(s.begin(), s.end(), from) - s.begin(); i < t.pts.size() && s[i] <= to; ++i)
    pts.push_back(t.pts[i]);
  return pts.size() >= 2 && straightness(pts, principal_axis(pts)).first <= kArmCornerPx;
}

// Finds where the arm's own stroke begins and the line it leaves the junction along, fitted
// to one window there. A short or unclean arm falls back to its middle part. A loop edge is
// measured over its first half only, so its two arms stay distinct.
// With `grow` (placing a junction or a crossing, where the lines must meet exactly) the
// window grows while the arm runs straight, and the stroke may begin up to a window later
// where thinning still bends it: a later start is taken when it runs straight two windows
// longer (an arc runs no straighter from a little farther on). Which arms continue each other
// (crossings, cusps) is told by the one window's direction: the grown one took the arch of a
// Hershey "n" off its stem, each such glyph a pen lift more. `later_windows` above one: past an
// acute junction's shared ink (kMergedStartWindows).
Arm measure_arm(const StrokeGraph& g, End end, const JunctionOptions& opt, bool grow, int later_windows) {
  Arm arm;
  arm.end = end;
  Trace t = g.trace_from(end);
  const std::vector<double> s = arc_lengths(t.pts);
  double length = s.back();
  if (g.node_of(end) == g.node_of(g.other_end(end))) length /= 2;
  // The other strokes' ink reaches about half a width (clean_run) from the node: the arm's
  // own stroke begins no nearer, even where its sections widen too little to tell (blurred ink).
  const double s0 = std::max(clean_start(t, s, 0.5 * length, opt), std::min(opt.clean_run, 0.4 * length));
  arm.clean_from = s0;
  int best = 0;
  for (int half = 0; half <= 2 * later_windows; ++half) {
    const double from = s0 + 0.5 * half * opt.arm_window;
    if (from >= length) break;
    if (half > 2 && (best > 1 || !runs_straight(t, s, from, from + kLongRunWindows * opt.arm_window, length))) break;
    Line line;
    const int run = straight_run(t, s, from, length, opt, grow ? kArmWindowsMax : 1, line);
    if (run >= (best > 0 ? best + 2 : 1))
      best = run, arm.ok = true, arm.clean_from = from, arm.anchor = line.anchor, arm.dir = line.dir;
    if (!grow) break;
  }
  return arm;
}

std::vector<Arm> measure_arms(const StrokeGraph& g, const std::vector<End>& ends, const JunctionOptions& opt, bool grow,
                              int later_windows = 1) {
  std::vector<Arm> arms;
  for (End end : ends) arms.push_back(measure_arm(g, end, opt, grow, later_windows));
  return arms;
}

// How far the junction point may move from the nodes' centroid: within the shared ink.
double max_junction_move(const std::vector<Arm>& arms) {
  double m = 0;
  for (const Arm& a : arms) m = std::max(m, a.clean_from);
  return m + 1;
}

double line_distance(const Arm& a, Vec2 p) { return std::abs(cross(a.dir, p - a.anchor)); }

// Least-squares meeting point of the arm lines, pulled lightly towards `centre` (which fixes
// the point along nearly parallel arms). Falls back to `centre` when the point is off the
// ink or farther than max_move.
Vec2 meeting_point(const std::vector<Arm>& arms, Vec2 centre, double max_move, const cv::Mat& coverage) {
  double a = kCentroidWeight, b = 0, c = kCentroidWeight;
  double rx = kCentroidWeight * centre.x, ry = kCentroidWeight * centre.y;
  for (const Arm& arm : arms) {
    if (!arm.ok) continue;
    // Projector onto the line's normal: I - d d^T.
    double pxx = 1 - arm.dir.x * arm.dir.x, pxy = -arm.dir.x * arm.dir.y, pyy = 1 - arm.dir.y * arm.dir.y;
    a += pxx, b += pxy, c += pyy;
    rx += pxx * arm.anchor.x + pxy * arm.anchor.y;
    ry += pxy * arm.anchor.x + pyy * arm.anchor.y;
  }
  double det = a * c - b * b;
  Vec2 p{(c * rx - b * ry) / det, (a * ry - b * rx) / det};
  return dist(p, centre) <= max_move && coverage_at(coverage, p) >= 0.5 ? p : centre;
}

// The first point kept of a trace with arc lengths s when what is nearer than `from` to its
// start is dropped, keeping at least two points.
size_t first_kept(const std::vector<double>& s, double from) {
  size_t k = 0;
  while (k + 2 < s.size() && s[k] < from) ++k;
  return k;
}

// Drops the points of the edge at `end` nearer than arc length `from` to that end (the
// shared, distorted part of an arm), keeping at least two points.
void trim_arm(StrokeGraph& g, End end, double from) {
  Trace t = g.trace_from(end);
  const size_t first = first_kept(arc_lengths(t.pts), from);
  if (first == 0) return;
  Trace kept;
  for (size_t i = first; i < t.pts.size(); ++i) kept.push(t.pts[i], t.width[i]);
  if (end.tail) kept.reverse();
  g.edges[end.edge].trace = std::move(kept);
}

// The algebraic (Kasa) circle through the points, in coordinates about their centroid; false
// when they are too few or collinear.
bool fit_circle(const std::vector<Vec2>& pts, Vec2& centre, double& radius) {
  if (pts.size() < 8) return false;
  Vec2 m;
  for (Vec2 p : pts) m = m + p;
  m = m / double(pts.size());
  cv::Matx33d ata = cv::Matx33d::zeros();
  cv::Vec3d atb = cv::Vec3d::all(0), c;
  for (Vec2 p : pts) {
    const Vec2 d = p - m;
    const cv::Vec3d row(d.x, d.y, 1);
    ata += row * row.t();
    atb += -(d.x * d.x + d.y * d.y) * row;
  }
  if (!cv::solve(ata, atb, c, cv::DECOMP_CHOLESKY)) return false;
  const double r2 = (c[0] * c[0] + c[1] * c[1]) / 4 - c[2];
  if (!(r2 > 0)) return false;
  centre = m + Vec2{-c[0] / 2, -c[1] / 2}, radius = std::sqrt(r2);
  return true;
}

// The circle an arm bends along from where its own stroke begins, if it does: fitted to its
// trace from kArcSkipWidths past there to kArcOwnWidths widths on (at least kArmWindowsMax
// windows), then a width farther at a time while the trace keeps within kArmCornerPx of it. The
// arm bends when its trace bows more than that off the line through it, and kArcBendRatio times
// as far as off the circle. Its line, measured over a few windows, is a chord: carried back to
// the junction it lands off the stroke, the farther the more the arm curves.
struct ArmArc {
  Vec2 centre;
  double radius = 0;
  Vec2 start;       // where the arm's own stroke begins
  double span = 0;  // arc length of trace fitted, from there
};
std::optional<ArmArc> arm_arc(const StrokeGraph& g, const Arm& arm, const JunctionOptions& opt) {
  if (!arm.ok) return std::nullopt;
  const Trace t = g.trace_from(arm.end);
  const std::vector<double> s = arc_lengths(t.pts);
  const double width = std::max(2.0, median_width(t, std::numeric_limits<double>::infinity(), 2));
  const double length = g.node_of(arm.end) == g.node_of(g.other_end(arm.end)) ? s.back() / 2 : s.back();
  const size_t first = first_kept(s, arm.clean_from + kArcSkipWidths * width);
  const Vec2 start = t.pts[first_kept(s, arm.clean_from)];
  std::optional<ArmArc> found;
  for (double span = std::max(kArmWindowsMax * opt.arm_window, kArcOwnWidths * width); arm.clean_from + span <= length;
       span += width) {
    std::vector<Vec2> pts;
    for (size_t i = first; i < t.pts.size() && s[i] <= arm.clean_from + span; ++i) pts.push_back(t.pts[i]);
    ArmArc arc{{}, 0, start, span};
    if (!fit_circle(pts, arc.centre, arc.radius) || arc.radius < width) break;
    double on_circle = 0, on_line = 0;
    const Line chord = principal_axis(pts);
    for (Vec2 q : pts) {
      on_circle = std::max(on_circle, std::abs(dist(q, arc.centre) - arc.radius));
      on_line = std::max(on_line, std::abs(cross(chord.dir, q - chord.anchor)));
    }
    if (on_circle > kArmCornerPx) break;
    if (on_line > kArmCornerPx && on_line > kArcBendRatio * on_circle) found = arc;
  }
  return found;
}

// Replaces the shared part of an arm that bends, up to where its own stroke begins, by its
// circle from the junction p.
void arc_from(StrokeGraph& g, const Arm& arm, const ArmArc& arc, Vec2 p) {
  trim_arm(g, arm.end, arm.clean_from);
  const Trace t = g.trace_from(arm.end);
  const Vec2 u = p - arc.centre, v = t.pts.front() - arc.centre;
  const double a0 = std::atan2(u.y, u.x), turn = std::atan2(cross(u, v), dot(u, v));
  Trace run{{p}, {kUnknownWidth}};
  const int steps = static_cast<int>(std::ceil(std::abs(turn) * arc.radius));
  for (int i = 1; i < steps; ++i) {
    const double a = a0 + turn * i / steps;
    run.push(arc.centre + Vec2{std::cos(a), std::sin(a)} * arc.radius);
  }
  run.append(t);
  if (arm.end.tail) run.reverse();
  g.edges[arm.end.edge].trace = std::move(run);
}

// Where a straight arm's line crosses a bending arm's circle, nearest `near`; false where it
// passes the circle by.
bool meets_circle(const Arm& line, const ArmArc& arc, Vec2 near, Vec2& at) {
  const std::vector<Vec2> x = line_circle(line.anchor, line.dir, arc.centre, arc.radius);
  if (x.empty()) return false;
  at = dist(x[0], near) <= dist(x[1], near) ? x[0] : x[1];
  return true;
}

// Moves every end at node n to node `into`.
void move_ends(StrokeGraph& g, int n, int into) {
  for (End end : g.nodes[n].ends) {
    Edge& e = g.edges[end.edge];
    (end.tail ? e.n1 : e.n0) = into;
    g.nodes[into].ends.push_back(end);
  }
  g.nodes[n].ends.clear();
  g.nodes[n].alive = false;
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// Step 1: contracts short edges between junction nodes, and bubbles: two edges joining the
// same two junctions, together shorter than four times merge_length, close round a pinhole of paper
// (where strokes part at a shallow angle the wedge between them leaves one), which is no hole of
// the drawing. The merged node sits at the mean of the nodes it replaces.
void merge_close_junctions(StrokeGraph& g, double merge_length) {
  std::vector<int> parent(g.nodes.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> contracted;
  auto joins_junctions = [&](const Edge& edge, double shorter_than) {
    return edge.alive && edge.n0 != edge.n1 && g.nodes[edge.n0].degree() >= 3 && g.nodes[edge.n1].degree() >= 3 &&
           edge.trace.length() < shorter_than;
  };
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!joins_junctions(edge, merge_length)) continue;
    contracted.push_back(static_cast<int>(e));
    parent[find_root(parent, edge.n0)] = find_root(parent, edge.n1);
  }
  // Bubbles, between the junctions so merged.
  const double bubble_length = 4 * merge_length;
  std::map<std::pair<int, int>, std::vector<double>> lengths;
  std::map<std::pair<int, int>, std::vector<int>> between;
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!joins_junctions(edge, bubble_length)) continue;
    const int a = find_root(parent, edge.n0), b = find_root(parent, edge.n1);
    if (a == b) continue;
    between[std::minmax(a, b)].push_back(static_cast<int>(e));
    lengths[std::minmax(a, b)].push_back(edge.trace.length());
  }
  for (auto& [pair, edges] : between) {
    std::vector<double>& l = lengths[pair];
    std::sort(l.begin(), l.end());
    if (l.size() < 2 || l[0] + l[1] >= bubble_length) continue;
    contracted.insert(contracted.end(), edges.begin(), edges.end());
    parent[find_root(parent, pair.first)] = find_root(parent, pair.second);
  }
  std::vector<std::vector<int>> groups(g.nodes.size());
  for (size_t n = 0; n < parent.size(); ++n)
    if (g.nodes[n].alive) groups[find_root(parent, static_cast<int>(n))].push_back(static_cast<int>(n));
  for (const auto& group : groups) {
    if (group.size() < 2) continue;
    Vec2 sum;
    for (int n : group) sum = sum + g.nodes[n].p;
    int merged = g.add_node(sum / double(group.size()));
    for (int n : group) move_ends(g, n, merged);
  }
  // The contracted edges are now loops at their merged nodes.
  for (int e : contracted)
    if (g.edges[e].alive) g.remove_edge(e);
}

// A pairing of arms (indices into `arms`) is accepted when every pair continues straight
// and every arm's line passes near the crossing point. Returns the sum of -cos(turn), or -1.
double pairing_score(const std::vector<Arm>& arms, const Pairing& pairs, Vec2 crossing,
                     const JunctionOptions& opt) {
  const double min_straightness = std::cos(deg2rad(opt.max_turn_deg));
  double score = 0;
  for (auto [i, j] : pairs) {
    const Arm &a = arms[i], &b = arms[j];
    if (!a.ok || !b.ok) return -1;
    double straightness = -dot(a.dir, b.dir);
    if (straightness < min_straightness) return -1;
    if (line_distance(a, crossing) > opt.max_offset || line_distance(b, crossing) > opt.max_offset) return -1;
    score += straightness;
  }
  return score;
}

// Joins each pair of arms through `crossing`, after trimming the distorted part of each.
void join_through(StrokeGraph& g, const std::vector<Arm>& arms, const Pairing& pairs,
                  Vec2 crossing) {
  std::vector<End> ends;
  for (const Arm& a : arms) ends.push_back(a.end);
  for (auto [i, j] : pairs) {
    trim_arm(g, ends[i], arms[i].clean_from);
    trim_arm(g, ends[j], arms[j].clean_from);
    int joined = g.join(ends[i], ends[j], &crossing);
    // A loop edge at this node has its other end among the arms: that end now belongs to
    // the joined edge, at its start (from arm i's edge) or its end (from arm j's edge).
    for (size_t k = 0; k < ends.size(); ++k) {
      if (static_cast<int>(k) == i || static_cast<int>(k) == j) continue;
      if (ends[k].edge == ends[i].edge) ends[k] = {joined, false};
      else if (ends[k].edge == ends[j].edge) ends[k] = {joined, true};
    }
  }
}

// All ways to split arms 0..n-1 into pairs (n even).
void all_pairings(std::vector<int>& rest, Pairing& current, std::vector<Pairing>& out) {
  if (rest.empty()) {
    out.push_back(current);
    return;
  }
  int first = rest.front();
  for (size_t k = 1; k < rest.size(); ++k) {
    int second = rest[k];
    std::vector<int> left;
    for (size_t m = 1; m < rest.size(); ++m)
      if (m != k) left.push_back(rest[m]);
    current.emplace_back(first, second);
    all_pairings(left, current, out);
    current.pop_back();
  }
}

// The best accepted pairing among the candidates, or nullptr.
const Pairing* best_pairing(const std::vector<Arm>& arms, const std::vector<Pairing>& candidates, Vec2 crossing,
                            const JunctionOptions& opt) {
  double best = -1;
  const Pairing* chosen = nullptr;
  for (const Pairing& pairs : candidates) {
    double score = pairing_score(arms, pairs, crossing, opt);
    if (score > best) best = score, chosen = &pairs;
  }
  return chosen;
}

// Step 2 for one node: resolves it as a crossing if some pairing of its arms passes.
void resolve_crossing(StrokeGraph& g, int n, const cv::Mat& coverage, const JunctionOptions& opt,
                      const std::vector<Pairing>& candidates) {
  const std::vector<Arm> arms = measure_arms(g, g.nodes[n].ends, opt, false);
  const Vec2 crossing = meeting_point(arms, g.nodes[n].p, max_junction_move(arms), coverage);
  const Pairing* chosen = best_pairing(arms, candidates, crossing, opt);
  if (!chosen) return;
  // The strokes go through where their straight runs meet, as at a junction (place_junction).
  const std::vector<Arm> placed = measure_arms(g, g.nodes[n].ends, opt, true);
  join_through(g, placed, *chosen, meeting_point(placed, g.nodes[n].p, max_junction_move(placed), coverage));
}

// A ribbon: two 3-way nodes joined by edge e. Merged into one 4-way node whose arms must
// pair across the ribbon (one arm from each side), else it is left alone.
void resolve_ribbon(StrokeGraph& g, int e, const cv::Mat& coverage, const JunctionOptions& opt) {
  const Edge& ribbon = g.edges[e];
  int a = ribbon.n0, b = ribbon.n1;
  std::vector<End> side_a, side_b;
  for (End end : g.nodes[a].ends)
    if (end.edge != e) side_a.push_back(end);
  for (End end : g.nodes[b].ends)
    if (end.edge != e) side_b.push_back(end);
  if (side_a.size() != 2 || side_b.size() != 2) return;
  // Measure the arms from their own nodes before merging.
  std::vector<End> ends = side_a;
  ends.insert(ends.end(), side_b.begin(), side_b.end());
  const Vec2 centre = (g.nodes[a].p + g.nodes[b].p) / 2;
  auto crossing_of = [&](const std::vector<Arm>& arms) {
    return meeting_point(arms, centre, ribbon.trace.length() / 2 + max_junction_move(arms), coverage);
  };
  const std::vector<Arm> arms = measure_arms(g, ends, opt, false);
  const std::vector<Pairing> across = {{{0, 2}, {1, 3}}, {{0, 3}, {1, 2}}};
  const Pairing* chosen = best_pairing(arms, across, crossing_of(arms), opt);
  if (!chosen) return;
  // The strokes go through where their straight runs meet, as at a junction (place_junction).
  const std::vector<Arm> placed = measure_arms(g, ends, opt, true);
  const Vec2 crossing = crossing_of(placed);
  g.remove_edge(e);
  int merged = g.add_node(crossing);
  move_ends(g, a, merged);
  move_ends(g, b, merged);
  join_through(g, placed, *chosen, crossing);
}

// Two junctions of one meeting: two strokes ending together on a third (a K's arms on its bar,
// an antenna's V on a television) leave two 3-way nodes joined by a short edge of shared ink,
// a T beside a T or a T beside the V's own split. When the lines of the four other arms,
// measured past that ink, all pass within max_offset of one point on the ink by the edge, the
// two nodes are one junction there (placed with the others, step 5). A crossing's arms pair
// across (step 2); two stems a little apart on one bar are parallel and meet nowhere near.
void resolve_split_meeting(StrokeGraph& g, int e, const cv::Mat& coverage, const JunctionOptions& opt) {
  const Edge& link = g.edges[e];
  const int a = link.n0, b = link.n1;
  std::vector<End> ends;
  for (int n : {a, b})
    for (End end : g.nodes[n].ends)
      if (end.edge != e) ends.push_back(end);
  if (ends.size() != 4) return;
  const std::vector<Arm> arms = measure_arms(g, ends, opt, true, kMergedStartWindows);
  for (const Arm& arm : arms)
    if (!arm.ok) return;
  const Vec2 centre = (g.nodes[a].p + g.nodes[b].p) / 2;
  const double max_move = link.trace.length() / 2 + max_junction_move(arms);
  const Vec2 p = meeting_point(arms, centre, max_move, coverage);
  for (const Arm& arm : arms)
    if (line_distance(arm, p) > opt.max_offset) return;
  const double length = link.trace.length();
  g.remove_edge(e);
  const int merged = g.add_node(p);
  g.nodes[merged].meeting_link_px = length;
  move_ends(g, a, merged);
  move_ends(g, b, merged);
}

// Whether the spur runs on along an arm's circle past the shared ink (over three widths from a
// width past its clean start, within kArmCornerPx): the arm and the spur are one curved stroke.
bool runs_on(const StrokeGraph& g, const Arm& spur, const std::optional<ArmArc>& arc) {
  if (!arc) return false;
  const Trace t = g.trace_from(spur.end);
  const std::vector<double> s = arc_lengths(t.pts);
  const double width = std::max(2.0, median_width(t, std::numeric_limits<double>::infinity(), 2));
  int n = 0;
  for (size_t q = first_kept(s, spur.clean_from + width); q < t.pts.size() && s[q] <= spur.clean_from + 4 * width; ++q, ++n)
    if (std::abs(dist(t.pts[q], arc->centre) - arc->radius) > kArmCornerPx) return false;
  return n >= 4;
}

// Where the lines of arms i and j (or one's line and the other's circle, `arcs`, where it
// bends; at most one does), measured away from the ink they share, meet on the spur (arm k):
// the apex of an acute Y whose stem the spur is, or a cusp's tip. Its arc length along the spur
// from the junction, when that point lies within half a stroke width of the spur's trace, on
// the ink, and a stroke width or more short of its end.
std::optional<double> apex_on_spur(const StrokeGraph& g, const std::vector<Arm>& placed, int i, int j,
                                   const std::optional<ArmArc> (&arcs)[2], End spur, const cv::Mat& coverage,
                                   const JunctionOptions& opt, Vec2& apex) {
  if (!placed[i].ok || !placed[j].ok || opt.apex_straight_widths <= 0) return std::nullopt;
  const Trace t = g.trace_from(spur);
  const double width = std::max(2.0, median_width(t, std::numeric_limits<double>::infinity(), 2));
  Vec2 q;
  const bool crossed = arcs[0]   ? meets_circle(placed[j], *arcs[0], t.pts.front(), q)
                       : arcs[1] ? meets_circle(placed[i], *arcs[1], t.pts.front(), q)
                                 : intersect(Line{placed[i].anchor, placed[i].dir}, Line{placed[j].anchor, placed[j].dir}, q);
  if (!crossed) return std::nullopt;
  // A straight stroke runs straight past their shared ink for apex_straight_widths and for
  // twice as long as its line is carried into it (or to its end, at least that long and half as
  // many widths): a curve leaving tangentially has no such line, and its chord's line meets the
  // other stroke's halfway to where they part. A stroke that bends is followed on its circle.
  for (int m : {i, j}) {
    if (const std::optional<ArmArc>& arc = arcs[m == i ? 0 : 1]) {
      if (2 * dist(q, arc->start) > arc->span) return std::nullopt;  // carried no farther than half its fit
      continue;
    }
    const Trace arm = g.trace_from(placed[m].end);
    const std::vector<double> s = arc_lengths(arm.pts);
    const double from = placed[m].clean_from, carried = dist(q, placed[m].anchor);
    const double straight = opt.apex_straight_widths * width;
    const double to = std::min(from + std::max(straight, 2 * carried), s.back());
    if (to < from + std::max(straight / 2, carried) || !runs_straight(arm, s, from, to, s.back())) return std::nullopt;
  }
  const std::vector<double> s = arc_lengths(t.pts);
  size_t best = 0;
  for (size_t m = 1; m < t.pts.size(); ++m)
    if (dist(t.pts[m], q) < dist(t.pts[best], q)) best = m;
  if (best == 0 || dist(t.pts[best], q) > width / 2 || s[best] > s.back() - width || coverage_at(coverage, q) < 0.5)
    return std::nullopt;
  apex = q;
  return s[best];
}

// Step 3 for one 3-way node: two strokes meeting tangentially at a cusp leave a spur (their
// merged tip) with both of them continuing straight into it. They become one edge that runs
// out along the spur to the tip and back. Where their own lines (or a line and a circle) meet on
// the spur (an acute Y: the spur is its stem, and the two strokes share their ink well before
// the skeleton splits), they run on to that point and the spur's stretch before it goes.
void resolve_cusp(StrokeGraph& g, int n, const cv::Mat& coverage, const JunctionOptions& opt) {
  const std::vector<End> ends = g.nodes[n].ends;
  const std::vector<Arm> arms = measure_arms(g, ends, opt, false);
  const double min_straightness = std::cos(deg2rad(opt.max_turn_deg));
  for (int k = 0; k < 3; ++k) {
    const int tip = g.node_of(g.other_end(ends[k]));
    if (tip == n || g.nodes[tip].degree() != 1) continue;
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    if (!arms[i].ok || !arms[j].ok || !arms[k].ok) continue;
    if (-dot(arms[i].dir, arms[k].dir) < min_straightness || -dot(arms[j].dir, arms[k].dir) < min_straightness) continue;
    const std::vector<Arm> placed = measure_arms(g, ends, opt, true, kMergedStartWindows);
    // One arm that bends is followed on its circle. Two circles crossing at an acute angle, or a
    // straight arm leaving the circle the spur runs on along (a T's curved bar), meet far off for
    // a fraction of a pixel in either: those keep the skeleton's split.
    std::optional<ArmArc> arcs[2] = {arm_arc(g, placed[i], opt), arm_arc(g, placed[j], opt)};
    if ((arcs[0] && arcs[1]) || runs_on(g, arms[k], arcs[0] ? arcs[0] : arcs[1])) arcs[0] = arcs[1] = std::nullopt;
    Vec2 apex;
    const std::optional<double> at = apex_on_spur(g, placed, i, j, arcs, ends[k], coverage, opt, apex);
    if (at) {
      for (int m : {0, 1}) {
        const Arm& arm = placed[m == 0 ? i : j];
        if (arcs[m]) arc_from(g, arm, *arcs[m], apex);
        else trim_arm(g, arm.end, arm.clean_from);
      }
      trim_arm(g, ends[k], *at);
    } else {
      for (int m : {i, j, k}) trim_arm(g, ends[m], arms[m].clean_from);
    }
    Trace out_and_back = g.trace_from(ends[k]), back = out_and_back;
    back.reverse();
    out_and_back.append(back);
    g.remove_edge(ends[k].edge);
    g.retire_node_if_bare(tip);
    int spur = g.add_edge(Edge{std::move(out_and_back), n, n});
    const Vec2* via = at ? &apex : nullptr;
    int first = g.join(ends[i], {spur, false}, via);
    // Arms i and j may be the two ends of one loop edge, whose other end `first` now starts at.
    g.join({first, true}, ends[j].edge == ends[i].edge ? End{first, false} : ends[j], via);
    return;
  }
}

// A T: of three arms, two that continue each other within kBarMaxTurnDeg are one stroke, the
// bar. Their anchors lie on its centreline, which their directions, measured over a few
// pixels, give less well: the junction is where the stem's line meets the line through the
// anchors (kept at `p` when that is off the ink or farther than max_move from `centre`).
Vec2 on_bar(const std::vector<Arm>& arms, Vec2 p, Vec2 centre, double max_move, const cv::Mat& coverage) {
  if (arms.size() != 3) return p;
  const double min_straightness = std::cos(deg2rad(kBarMaxTurnDeg));
  for (int k = 0; k < 3; ++k) {
    const Arm &a = arms[(k + 1) % 3], &b = arms[(k + 2) % 3], &stem = arms[k];
    if (!a.ok || !b.ok || !stem.ok || -dot(a.dir, b.dir) < min_straightness || dist(a.anchor, b.anchor) < 1e-9) continue;
    const Line bar{a.anchor, unit(b.anchor - a.anchor)};
    Vec2 q;
    if (!intersect(bar, Line{stem.anchor, stem.dir}, q)) q = bar.anchor + bar.dir * dot(p - bar.anchor, bar.dir);
    return dist(q, centre) <= max_move && coverage_at(coverage, q) >= 0.5 ? q : p;
  }
  return p;
}

// How much of the arm's trace (up to arc length clean_from) a straight run from the junction `p`
// may replace: all of it when the arm's line passes within a stroke width of p (its own stroke
// runs straight into the junction, as where two strokes share their ink at an acute angle),
// else as much as stays within half a stroke width of the straight run, on the stroke's ink.
// An arc leaving a junction tangentially shares its ink with the other stroke for a long way,
// and its chord would cut across the curve.
double straight_into(const StrokeGraph& g, const Arm& arm, Vec2 p) {
  const Trace t = g.trace_from(arm.end);
  const double width = std::max(2.0, median_width(t, std::numeric_limits<double>::infinity(), 2));
  if (!arm.ok || line_distance(arm, p) <= width) return arm.clean_from;
  const std::vector<double> s = arc_lengths(t.pts);
  size_t k = first_kept(s, arm.clean_from);
  for (; k > 0; --k) {
    bool on_ink = true;
    for (size_t i = 0; i < k && on_ink; ++i) on_ink = point_segment_distance(t.pts[i], p, t.pts[k]) <= width / 2;
    if (on_ink) break;
  }
  return s[k];
}

// Replaces the arm's shared ink by a straight run from `p`.
void run_from(StrokeGraph& g, const Arm& arm, Vec2 p) {
  trim_arm(g, arm.end, arm.clean_from);
  Trace from_p{{p}, {kUnknownWidth}};
  from_p.append(g.trace_from(arm.end));
  if (arm.end.tail) from_p.reverse();
  g.edges[arm.end.edge].trace = std::move(from_p);
}

// The circle of an edge's own stroke, fitted to its trace clear of the ink it shares at both
// ends (by a window more): points first..last, every one within tangent_offset of the circle,
// going `sweep` radians round it (signed: the trace's direction).
struct OwnCircle {
  Vec2 centre;
  double radius = 0, sweep = 0, off = 0, width = 0;
  size_t first = 0, last = 0;
};
std::optional<OwnCircle> own_circle(const StrokeGraph& g, int edge, const JunctionOptions& opt) {
  const Trace& t = g.edges[edge].trace;
  const std::vector<double> s = arc_lengths(t.pts);
  OwnCircle c;
  c.width = std::max(2.0, median_width(t, std::numeric_limits<double>::infinity(), 2));
  double skip[2];
  for (int side = 0; side < 2; ++side) {
    const Arm a = measure_arm(g, End{edge, side == 1}, opt, false, 1);
    skip[side] = (a.ok ? a.clean_from : opt.clean_run) + std::max(opt.arm_window, c.width);
  }
  c.first = first_kept(s, skip[0]), c.last = t.pts.size() - 1;
  while (c.last > c.first && s[c.last] > s.back() - skip[1]) --c.last;
  if (c.last < c.first + 8) return std::nullopt;
  if (!fit_circle({t.pts.begin() + c.first, t.pts.begin() + c.last + 1}, c.centre, c.radius)) return std::nullopt;
  for (size_t i = c.first; i <= c.last; ++i) {
    c.off = std::max(c.off, std::abs(dist(t.pts[i], c.centre) - c.radius));
    if (c.off > opt.tangent_offset) return std::nullopt;
    if (i > c.first)
      c.sweep += std::atan2(cross(t.pts[i - 1] - c.centre, t.pts[i] - c.centre), dot(t.pts[i - 1] - c.centre, t.pts[i] - c.centre));
  }
  return c;
}

// The circle from the contact `touch` round and back: the trace's own points more than a width
// from the contact (a stroke ending there shares its round cap's ink), and the circle's between,
// which must be on the ink (an oval bowl sharing a stem's ink, as a script a's, is no circle).
std::optional<Trace> loop_through(const Trace& t, OwnCircle c, Vec2 touch, const cv::Mat& coverage) {
  const double dir = c.sweep > 0 ? 1 : -1;
  auto angle_of = [&](Vec2 p) { return std::atan2(p.y - c.centre.y, p.x - c.centre.x); };
  auto turn = [&](double from, double to) {  // from `from` to `to` in the loop's direction, in [0, 2 pi)
    const double d = std::fmod(dir * (to - from), 2 * kPi);
    return d < 0 ? d + 2 * kPi : d;
  };
  size_t first = c.first, last = c.last;
  const double at_touch = angle_of(touch), clear = c.width / c.radius;
  while (first < last && turn(at_touch, angle_of(t.pts[first])) > kPi - clear) ++first;
  while (first < last && turn(at_touch, angle_of(t.pts[first])) < clear) ++first;
  while (last > first && turn(angle_of(t.pts[last]), at_touch) > kPi - clear) --last;
  while (last > first && turn(angle_of(t.pts[last]), at_touch) < clear) --last;
  if (last < first + 8) return std::nullopt;
  Trace loop{{touch}, {kUnknownWidth}};
  bool on_ink = true;
  auto along = [&](double from, double by) {
    const int steps = static_cast<int>(std::ceil(by * c.radius));
    for (int k = 1; k < steps; ++k) {
      const double a = from + dir * by * k / steps;
      loop.push(c.centre + Vec2{std::cos(a), std::sin(a)} * c.radius);
      on_ink = on_ink && coverage_at(coverage, loop.pts.back()) >= 0.5;
    }
  };
  along(at_touch, turn(at_touch, angle_of(t.pts[first])));
  for (size_t i = first; i <= last; ++i) loop.push(t.pts[i], t.width[i]);
  along(angle_of(t.pts[last]), turn(angle_of(t.pts[last]), at_touch));
  if (!on_ink) return std::nullopt;
  loop.push(touch);
  return loop;
}

// Step 4 for a 3-way node where a straight stem touches a circle: a stroke that touches a
// circle tangentially shares its ink with it for a while, and the skeleton splits where the inks
// part, well past the contact, bending the circle's trace towards the stem on both sides of the
// split. A stem that ends at the contact leaves a loop and the stem at one node; one that runs
// on past the contact (a d's stem) leaves two nodes joined by the circle's edge and by the
// shared ribbon, a stem at each. The circle is fitted to its edge away from the shared ink and
// the stem's line to its own stroke (through both halves' starts); when the line meets the
// circle at no more than tangent_max_deg, the junction is where it touches it, the circle runs
// on through that point as a loop, the ribbon goes, and the stem runs straight from it.
// Returns whether the node was so resolved.
bool resolve_tangent_circle(StrokeGraph& g, int n, const cv::Mat& coverage, const JunctionOptions& opt) {
  const std::vector<End> ends = g.nodes[n].ends;
  if (ends.size() != 3) return false;
  // The circle's edge, the ribbon's (-1 for a loop) and the stem's ends.
  int circle = -1, ribbon = -1, other = n;
  std::vector<End> stem_ends;
  for (int k = 0; k < 3; ++k) {
    const End a = ends[(k + 1) % 3], b = ends[(k + 2) % 3];
    if (a.edge == b.edge) {
      circle = a.edge, stem_ends = {ends[k]};
    } else if (const int m = g.node_of(g.other_end(a)); m != n && m == g.node_of(g.other_end(b)) &&
                                                         g.nodes[m].degree() == 3) {
      const bool a_longer = g.edges[a.edge].trace.length() > g.edges[b.edge].trace.length();
      circle = a_longer ? a.edge : b.edge, ribbon = a_longer ? b.edge : a.edge, other = m;
      for (End e : g.nodes[m].ends)
        if (e.edge != a.edge && e.edge != b.edge) stem_ends = {ends[k], e};
    }
  }
  if (circle < 0 || stem_ends.empty() || stem_ends[0].edge == circle) return false;
  if (stem_ends.size() == 2 && stem_ends[0].edge == stem_ends[1].edge) return false;
  std::vector<Arm> stems;
  for (End e : stem_ends) {
    stems.push_back(measure_arm(g, e, opt, true, kMergedStartWindows));
    if (!stems.back().ok) return false;
  }
  // The stem's line, from its first half's start outwards (through the second's).
  Line line{stems[0].anchor, stems[0].dir};
  if (stems.size() == 2) {
    if (dist(stems[0].anchor, stems[1].anchor) < 1e-9) return false;
    line.dir = unit(stems[0].anchor - stems[1].anchor);
    const double min_straightness = std::cos(deg2rad(opt.max_turn_deg));
    if (dot(stems[0].dir, line.dir) < min_straightness || -dot(stems[1].dir, line.dir) < min_straightness) return false;
  }

  const std::optional<OwnCircle> own = own_circle(g, circle, opt);
  // Most of a circle: what it shares with the stem is at most a third of it.
  if (!own || std::abs(own->sweep) < 1.3 * kPi) return false;
  const Vec2 centre = own->centre;
  const double radius = own->radius, width = own->width;
  const double off = std::abs(cross(line.dir, centre - line.anchor));
  const double meet = std::acos(std::min(1.0, off / radius));  // the angle between stem and circle
  // A stem that ends on the loop may meet it at any angle when the loop is a circle this closely
  // (a hand-drawn ring is not: forced round, it leaves its ink).
  if (meet > deg2rad(stems.size() == 1 ? 90 : opt.tangent_exact_deg) || off > radius + opt.tangent_offset ||
      (meet > deg2rad(opt.tangent_max_deg) && own->off > opt.circle_stem_offset))
    return false;
  // A stem measured within tangent_exact_deg of the tangent touches the circle at the foot of
  // the centre on its line (where the line crosses the circle is lost in the noise of the
  // angle); one a little steeper starts where its line crosses the circle behind it.
  const Vec2 foot = line.anchor + line.dir * dot(centre - line.anchor, line.dir);
  const double half_chord = meet <= deg2rad(opt.tangent_exact_deg) ? 0 : std::sqrt(radius * radius - off * off);
  Vec2 touch = foot - line.dir * half_chord;
  if (dot(line.anchor - (foot + line.dir * half_chord), line.dir) > 0) touch = foot + line.dir * half_chord;
  // The stem leaves the contact outwards (both ways), on the ink, within the ink it shares with
  // the circle: the two part a width apart, sqrt(2 r w) from the contact.
  for (const Arm& stem : stems)
    if (dot(stem.anchor - touch, stem.dir) <= 0) return false;
  if (coverage_at(coverage, touch) < 0.5 || dist(touch, g.nodes[n].p) > std::sqrt(2 * radius * width) + width)
    return false;

  std::optional<Trace> loop = loop_through(g.edges[circle].trace, *own, touch, coverage);
  if (!loop) return false;
  g.edges[circle].trace = std::move(*loop);

  if (ribbon >= 0) {
    g.remove_edge(ribbon);
    move_ends(g, other, n);
  }
  g.nodes[n].p = touch;
  g.nodes[n].tangent = TangentRecord{false, static_cast<int>(stems.size()), rad2deg(meet), off - radius, own->off};
  for (const Arm& stem : stems) run_from(g, stem, touch);
  return true;
}

// The points of the trace from `end` that lie more than `apart` from `line`, from the first such
// one on, for at most `length` px: an arc's own ink where a stem runs along its tangent.
std::vector<Vec2> clear_of(const StrokeGraph& g, End end, const Line& line, double apart, double length,
                           size_t& first) {
  const Trace t = g.trace_from(end);
  const std::vector<double> s = arc_lengths(t.pts);
  std::vector<Vec2> out;
  first = 0;
  while (first < t.pts.size() && std::abs(cross(line.dir, t.pts[first] - line.anchor)) <= apart) ++first;
  for (size_t i = first; i < t.pts.size() && s[i] - s[first] <= length; ++i) out.push_back(t.pts[i]);
  return out;
}

// Step 4, for a 3-way node where a straight stem ends on an arc along its tangent (a line run
// into the bottom of a rounded end): they share their ink well past the contact, and the
// skeleton splits where the arc leaves the stem's ink, placing the junction there and bending
// both. The arc's circle is fitted to its own ink on both sides, where it is more than a stroke
// width from the stem's line; when that line touches the circle (within tangent_offset), the
// junction is the foot of the centre on it, the arc runs on its circle through it, and the stem
// runs straight to it.
bool resolve_tangent_arc(StrokeGraph& g, int n, const cv::Mat& coverage, const JunctionOptions& opt) {
  const std::vector<End> ends = g.nodes[n].ends;
  if (ends.size() != 3) return false;
  for (int k = 0; k < 3; ++k) {
    const End a = ends[(k + 1) % 3], b = ends[(k + 2) % 3];
    if (a.edge == b.edge || a.edge == ends[k].edge || b.edge == ends[k].edge) continue;
    const Arm stem = measure_arm(g, ends[k], opt, true, kMergedStartWindows);
    if (!stem.ok) continue;
    const Line line{stem.anchor, stem.dir};
    const double width = std::max(2.0, median_width(g.trace_from(ends[k]), std::numeric_limits<double>::infinity(), 2));
    size_t first[2];
    const std::vector<Vec2> own[2] = {clear_of(g, a, line, width, kArcOwnWidths * width, first[0]),
                                      clear_of(g, b, line, width, kArcOwnWidths * width, first[1])};
    if (own[0].size() < 8 || own[1].size() < 8) continue;
    std::vector<Vec2> both = own[0];
    both.insert(both.end(), own[1].begin(), own[1].end());
    Vec2 centre;
    double radius = 0;
    if (!fit_circle(both, centre, radius)) continue;
    // Each side lies on the circle, and bends as it does: a straight stroke beside a curve
    // (a y's arms) lies about as near some circle.
    double off_circle = 0;
    bool bends = true;
    for (const std::vector<Vec2>& pts : own) {
      double on_circle = 0, on_line = 0;
      const Line chord = principal_axis(pts);
      for (Vec2 q : pts) {
        on_circle = std::max(on_circle, std::abs(dist(q, centre) - radius));
        on_line = std::max(on_line, std::abs(cross(chord.dir, q - chord.anchor)));
      }
      off_circle = std::max(off_circle, on_circle);
      bends = bends && on_line > kArcBendRatio * on_circle;
    }
    const double off = std::abs(cross(line.dir, centre - line.anchor));
    if (!bends || off_circle > opt.tangent_offset || std::abs(off - radius) > opt.tangent_offset) continue;
    const Vec2 touch = line.anchor + line.dir * dot(centre - line.anchor, line.dir);
    // The arc passes through the contact (its two sides lie either side of it), the stem runs
    // out from it, and the contact is on the ink within the stretch the two share.
    auto angle_from_touch = [&](Vec2 q) {
      const Vec2 u = touch - centre, v = q - centre;
      return std::atan2(cross(u, v), dot(u, v));
    };
    const double side[2] = {angle_from_touch(own[0].front()), angle_from_touch(own[1].front())};
    if (side[0] * side[1] >= 0 || dot(stem.anchor - touch, stem.dir) <= 0 || coverage_at(coverage, touch) < 0.5 ||
        dist(touch, g.nodes[n].p) > std::sqrt(2 * radius * width) + width)
      continue;
    // Each side of the arc: from the contact round its circle to its own ink, then that ink on.
    for (int m = 0; m < 2; ++m) {
      const End end = m == 0 ? a : b;
      const Trace t = g.trace_from(end);
      Trace run{{touch}, {kUnknownWidth}};
      const int steps = static_cast<int>(std::ceil(std::abs(side[m]) * radius));
      const double a0 = std::atan2(touch.y - centre.y, touch.x - centre.x);
      for (int i = 1; i < steps; ++i) {
        const double at = a0 + side[m] * i / steps;
        run.push(centre + Vec2{std::cos(at), std::sin(at)} * radius);
      }
      for (size_t i = first[m]; i < t.pts.size(); ++i) run.push(t.pts[i], t.width[i]);
      if (end.tail) run.reverse();
      g.edges[end.edge].trace = std::move(run);
    }
    g.nodes[n].p = touch;
    g.nodes[n].tangent = TangentRecord{true, 1, 0, off - radius, off_circle};
    run_from(g, stem, touch);
    return true;
  }
  return false;
}

// Step 4, first: two circles that touch (side by side, or one inside the other at its rim)
// share their ink about the contact, and the skeleton makes of them two 3-way nodes joined by
// three edges: each circle's own part and the shared ribbon between. Each circle is fitted to its
// own part away from the shared ink; when they touch within circle_touch, each runs on its circle
// through the contact as a loop of its own and the ribbon goes. Returns whether the ribbon was so
// resolved.
bool resolve_touching_circles(StrokeGraph& g, int ribbon, const cv::Mat& coverage, const JunctionOptions& opt) {
  if (opt.circle_touch <= 0) return false;
  const Edge& r = g.edges[ribbon];
  const int a = r.n0, b = r.n1;
  if (a == b || g.nodes[a].degree() != 3 || g.nodes[b].degree() != 3) return false;
  // The two other edges at a, each running from a to b.
  std::vector<int> parts;
  for (End e : g.nodes[a].ends)
    if (e.edge != ribbon) parts.push_back(e.edge);
  if (parts[0] == parts[1]) return false;
  for (int e : parts) {
    const Edge& edge = g.edges[e];
    if (!((edge.n0 == a && edge.n1 == b) || (edge.n0 == b && edge.n1 == a))) return false;
  }
  std::optional<OwnCircle> c[2];
  for (int k = 0; k < 2; ++k)
    if (!(c[k] = own_circle(g, parts[k], opt)) || c[k]->radius < c[k]->width) return false;
  // Half of the larger circle at least is its own, and a quarter of the smaller: a circle inside
  // another shares up to half its ink with it (radii 1:2, 12 px strokes).
  const bool larger = c[1]->radius > c[0]->radius;
  if (std::abs(c[larger]->sweep) < kPi || std::abs(c[!larger]->sweep) < kPi / 2) return false;
  const Vec2 u = unit(c[1]->centre - c[0]->centre);
  const double d = dist(c[0]->centre, c[1]->centre), r0 = c[0]->radius, r1 = c[1]->radius;
  const double width = std::max(c[0]->width, c[1]->width);
  // Beside each other the centres are r0 + r1 apart; one inside the other, |r0 - r1| (and then
  // the two are distinct circles: apart by a width at least).
  Vec2 touch;
  if (std::abs(d - (r0 + r1)) <= opt.circle_touch) {
    touch = c[0]->centre + u * (r0 + (d - r0 - r1) / 2);
  } else if (std::abs(d - std::abs(r0 - r1)) <= opt.circle_touch && d >= width) {
    const Vec2 out = r0 > r1 ? u : -u;  // from the large circle's centre through the small one's
    const Vec2 big = r0 > r1 ? c[0]->centre : c[1]->centre, small = r0 > r1 ? c[1]->centre : c[0]->centre;
    touch = (big + out * std::max(r0, r1) + small + out * std::min(r0, r1)) / 2.0;
  } else {
    return false;
  }
  // The ribbon is the ink they share: it passes the contact.
  double near = std::numeric_limits<double>::infinity();
  for (Vec2 q : r.trace.pts) near = std::min(near, dist(q, touch));
  if (near > width || coverage_at(coverage, touch) < 0.5) return false;
  std::optional<Trace> loops[2];
  for (int k = 0; k < 2; ++k)
    if (!(loops[k] = loop_through(g.edges[parts[k]].trace, *c[k], touch, coverage))) return false;
  g.remove_edge(ribbon);
  for (int k = 0; k < 2; ++k) {
    g.remove_edge(parts[k]);
    const int anchor = g.add_node(touch);
    g.nodes[anchor].loop = true;
    Edge loop;
    loop.trace = std::move(*loops[k]);
    loop.n0 = loop.n1 = anchor;
    loop.closed = true;
    g.add_edge(std::move(loop));
  }
  g.retire_node_if_bare(a);
  g.retire_node_if_bare(b);
  return true;
}

// Step 5: the junction moves to where its arms meet; each arm runs straight into it.
void place_junction(StrokeGraph& g, int n, const cv::Mat& coverage, const JunctionOptions& opt) {
  const std::vector<Arm> arms = measure_arms(g, g.nodes[n].ends, opt, true, kMergedStartWindows);
  const double max_move = max_junction_move(arms);
  const Vec2 p = on_bar(arms, meeting_point(arms, g.nodes[n].p, max_move, coverage), g.nodes[n].p, max_move, coverage);
  g.nodes[n].p = p;
  for (const Arm& arm : arms) {
    trim_arm(g, arm.end, straight_into(g, arm, p));
    Trace t = g.trace_from(arm.end);
    Trace moved{{p}, {kUnknownWidth}};
    moved.append(t);
    if (arm.end.tail) moved.reverse();
    g.edges[arm.end.edge].trace = std::move(moved);
  }
}

}  // namespace

void resolve_junctions(StrokeGraph& g, const cv::Mat& coverage, const JunctionOptions& opt) {
  merge_close_junctions(g, opt.merge_length);
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (g.edges[e].alive) resolve_touching_circles(g, static_cast<int>(e), coverage, opt);

  // Ribbons, shortest first; a node takes part in one at most.
  std::vector<std::pair<double, int>> ribbons;
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!edge.alive || edge.n0 == edge.n1) continue;
    if (g.nodes[edge.n0].degree() != 3 || g.nodes[edge.n1].degree() != 3) continue;
    double length = edge.trace.length();
    if (length < opt.crossing_length) ribbons.emplace_back(length, static_cast<int>(e));
  }
  std::sort(ribbons.begin(), ribbons.end());
  for (auto [length, e] : ribbons) {
    const Edge& edge = g.edges[e];
    if (!edge.alive || edge.n0 == edge.n1 || g.nodes[edge.n0].degree() != 3 || g.nodes[edge.n1].degree() != 3)
      continue;
    resolve_ribbon(g, e, coverage, opt);
  }

  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (!node.alive || node.loop || node.degree() < 4 || node.degree() % 2 != 0 || node.degree() > 8) continue;
    std::vector<int> rest(node.degree());
    std::iota(rest.begin(), rest.end(), 0);
    Pairing current;
    std::vector<Pairing> candidates;
    all_pairings(rest, current, candidates);
    resolve_crossing(g, static_cast<int>(n), coverage, opt, candidates);
  }
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (edge.alive && edge.n0 != edge.n1 && g.nodes[edge.n0].degree() == 3 && g.nodes[edge.n1].degree() == 3 &&
        edge.trace.length() < opt.meeting_length)
      resolve_split_meeting(g, static_cast<int>(e), coverage, opt);
  }
  g.dissolve_pass_through_nodes();

  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].alive && !g.nodes[n].loop && g.nodes[n].degree() == 3) resolve_cusp(g, static_cast<int>(n), coverage, opt);
  g.dissolve_pass_through_nodes();

  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].alive && !g.nodes[n].loop && g.nodes[n].degree() >= 3 &&
        !resolve_tangent_circle(g, static_cast<int>(n), coverage, opt) &&
        !resolve_tangent_arc(g, static_cast<int>(n), coverage, opt))
      place_junction(g, static_cast<int>(n), coverage, opt);
}

}  // namespace sv::graph
