#include "graph/filled.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <opencv2/imgproc.hpp>
#include <queue>

#include "raster/thin.hpp"

namespace sv::graph {
namespace {

struct Mark {
  Vec2 centroid;
  cv::Rect box;
  MarkRecord record;  // its diameter, whether a small loop filled in (drawn as its outline), ...
};

// One stroke of a mark: an open path, a closed loop (first point repeated) or a single point.
struct Piece {
  Polyline pts;
  bool closed = false;
};

// A stretch of an edge outside every mark. An end cut at a mark's edge has no node (-1) and
// the mark's label; the edge's own ends keep their nodes.
struct Run {
  Trace trace;
  int node[2] = {-1, -1};
  int mark[2] = {0, 0};
};

// Where a cut end attaches: arc length s along piece `piece` of its mark.
struct Port {
  int run, end;
  int piece = -1;
  double s = 0;
  int node = -1;
};

// The ink (255) with a one-pixel frame of paper: the image's surround counts as paper.
cv::Mat framed_ink(const cv::Mat& binary) {
  cv::Mat framed;
  cv::copyMakeBorder(binary != 0, framed, 1, 1, 1, 1, cv::BORDER_CONSTANT, 0);
  return framed;
}

// Distance from every pixel centre to the nearest paper pixel centre, the image's surround
// counting as paper. The inscribed disc centred at a pixel with distance d is 2d - 1 wide: the
// edge lies halfway between an ink and a paper pixel centre.
// `framed`: framed_ink's.
cv::Mat distance_to_paper(const cv::Mat& framed) {
  cv::Mat d;
  cv::distanceTransform(framed, d, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  return d(cv::Rect(1, 1, framed.cols - 2, framed.rows - 2)).clone();
}

// Whether any ink pixel may be (min_diameter + 1) / 2 from paper, as find_marks requires: most
// drawings have no ink that wide, which the 3x3 chamfer distance (at least 0.955 times the
// Euclidean) tells at a fraction of the exact transform's cost.
bool may_hold_marks(const cv::Mat& framed, const FilledOptions& opt) {
  const double widest = opt.loop_diameter > 0 ? std::min(opt.min_diameter, opt.loop_diameter) : opt.min_diameter;
  const double reach = 0.95 * (widest + 1) / 2;
  // Cheaper still, and as sure: no chamfer step is longer than 1.3693 (the diagonal), so a
  // pixel `reach` from paper has only ink within a chessboard distance under reach / 1.37.
  // When erosion by that square leaves nothing, no pixel is that far; a square reaching across
  // the shorter side always meets the frame of paper.
  const double half = std::ceil(reach / 1.37) - 1;
  if (half >= (std::min(framed.rows, framed.cols) - 1) / 2.0) return false;
  if (half >= 1) {
    const int side = 2 * static_cast<int>(half) + 1;
    cv::Mat core;
    cv::erode(framed, core, cv::getStructuringElement(cv::MORPH_RECT, {side, side}));
    if (cv::countNonZero(core) == 0) return false;
  }
  cv::Mat d;
  cv::distanceTransform(framed, d, cv::DIST_L2, cv::DIST_MASK_3);
  double most = 0;
  cv::minMaxLoc(d, nullptr, &most);
  return most >= reach;
}

// Labels (CV_32S, mark index + 1, 0 elsewhere) of the parts of the opening of the ink by discs
// of core_radius whose largest disc is at least min_diameter wide.
std::vector<Mark> find_marks(const cv::Mat& to_paper, const FilledOptions& opt, cv::Mat& labels) {
  if (cv::countNonZero(to_paper >= (opt.min_diameter + 1) / 2) == 0) return {};
  const float reach = static_cast<float>(opt.core_radius + 0.5);
  cv::Mat core = to_paper >= reach, to_core, parts, stats, centroids;
  cv::distanceTransform(core == 0, to_core, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  int n = cv::connectedComponentsWithStats((to_core < reach) & (to_paper > 0), parts, stats, centroids, 8, CV_32S);
  std::vector<float> widest(n, 0);
  for (int y = 0; y < parts.rows; ++y)
    for (int x = 0; x < parts.cols; ++x) {
      int c = parts.at<int>(y, x);
      if (c > 0) widest[c] = std::max(widest[c], to_paper.at<float>(y, x));
    }
  std::vector<Mark> marks;
  std::vector<int> index(n, 0);
  for (int c = 1; c < n; ++c) {
    if (2.0 * widest[c] - 1 < opt.min_diameter) continue;
    cv::Rect box(stats.at<int>(c, cv::CC_STAT_LEFT), stats.at<int>(c, cv::CC_STAT_TOP),
                 stats.at<int>(c, cv::CC_STAT_WIDTH), stats.at<int>(c, cv::CC_STAT_HEIGHT));
    Mark m{{centroids.at<double>(c, 0), centroids.at<double>(c, 1)}, box, {}};
    m.record.diameter_px = 2.0 * widest[c] - 1;
    marks.push_back(std::move(m));
    index[c] = static_cast<int>(marks.size());
  }
  labels = cv::Mat::zeros(parts.size(), CV_32S);
  for (int y = 0; y < parts.rows; ++y)
    for (int x = 0; x < parts.cols; ++x) labels.at<int>(y, x) = index[parts.at<int>(y, x)];
  return marks;
}

int label_at(const cv::Mat& labels, Vec2 p) {
  int x = static_cast<int>(std::lround(p.x)), y = static_cast<int>(std::lround(p.y));
  return x < 0 || y < 0 || x >= labels.cols || y >= labels.rows ? 0 : labels.at<int>(y, x);
}

// The mark's pixels (0/1) in its box with a one-pixel frame; `origin` is the frame's corner.
cv::Mat mark_mask(const cv::Mat& labels, int label, const Mark& m, cv::Point& origin) {
  cv::Rect framed(m.box.x - 1, m.box.y - 1, m.box.width + 2, m.box.height + 2);
  cv::Rect inside = framed & cv::Rect(0, 0, labels.cols, labels.rows);
  cv::Mat mask = cv::Mat::zeros(framed.size(), CV_8U);
  mask(inside - framed.tl()).setTo(1, labels(inside) == label);
  origin = framed.tl();
  return mask;
}

// Moving average over three points, `passes` times: takes the pixel staircase out of a
// traced path (a closed one wraps; an open one keeps its ends).
void smooth(Polyline& pts, bool closed, int passes) {
  const size_t n = closed ? pts.size() - 1 : pts.size();
  if (n < 3) return;
  for (int k = 0; k < passes; ++k) {
    Polyline prev = pts;
    for (size_t i = closed ? 0 : 1; i < (closed ? n : n - 1); ++i)
      pts[i] = (prev[(i + n - 1) % n] + prev[i] * 2.0 + prev[(i + 1) % n]) / 4.0;
    if (closed) pts[n] = pts[0];
  }
}

// Dijkstra over the skeleton's pixels (8-neighbours, steps of 1 or sqrt 2) from pixel `from`:
// the predecessor of every pixel, and the farthest pixel.
int farthest_pixel(const std::vector<cv::Point>& px, const cv::Mat& index, int from, std::vector<int>& prev) {
  std::vector<double> d(px.size(), 1e300);
  prev.assign(px.size(), -1);
  using Item = std::pair<double, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  d[from] = 0;
  queue.push({0, from});
  int far = from;
  while (!queue.empty()) {
    auto [du, u] = queue.top();
    queue.pop();
    if (du > d[u]) continue;
    if (du > d[far] || (du == d[far] && u < far)) far = u;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int v = index.at<int>(px[u].y + dy, px[u].x + dx);
        double step = dx && dy ? std::sqrt(2.0) : 1.0;
        if (v >= 0 && du + step < d[v]) d[v] = du + step, prev[v] = u, queue.push({d[v], v});
      }
  }
  return far;
}

// The longest path through the thinned mark (the diameter of its skeleton tree: the farthest
// pixel from any pixel, then the farthest from that), in image coordinates.
Polyline longest_path(const cv::Mat& mask, cv::Point origin) {
  cv::Mat skeleton = thin(mask);
  cv::Mat index(skeleton.rows + 2, skeleton.cols + 2, CV_32S, cv::Scalar(-1));
  std::vector<cv::Point> px;
  for (int y = 0; y < skeleton.rows; ++y)
    for (int x = 0; x < skeleton.cols; ++x)
      if (skeleton.at<uchar>(y, x)) {
        index.at<int>(y + 1, x + 1) = static_cast<int>(px.size());
        px.emplace_back(x + 1, y + 1);
      }
  if (px.empty()) return {};
  std::vector<int> prev;
  int a = farthest_pixel(px, index, 0, prev);
  int b = farthest_pixel(px, index, a, prev);
  Polyline path;
  for (int v = b; v >= 0; v = prev[v]) path.push_back({double(px[v].x - 1 + origin.x), double(px[v].y - 1 + origin.y)});
  return path;
}

// The closed polylines where `region`'s ink is `inset` from the edge of `d`'s mask, one per
// boundary: the boundary pixels of the region's pixels at least `inset` from that edge, each
// moved along the distance's gradient onto the level where it is exactly `inset` (pixels lie
// half a pixel inside their distance to the nearest outside pixel centre).
std::vector<Piece> outlines(const cv::Mat& d, const cv::Mat& region, cv::Point origin, double inset) {
  auto at = [&](int x, int y) { return x < 0 || y < 0 || x >= d.cols || y >= d.rows ? 0.0 : double(d.at<float>(y, x)); };
  std::vector<std::vector<cv::Point>> contours;
  cv::findContours(region & (d >= inset), contours, cv::RETR_LIST, cv::CHAIN_APPROX_NONE);
  std::vector<Piece> out;
  for (const auto& c : contours) {
    if (c.size() < 4) continue;
    Piece p{{}, true};
    for (cv::Point q : c) {
      Vec2 grad{at(q.x + 1, q.y) - at(q.x - 1, q.y), at(q.x, q.y + 1) - at(q.x, q.y - 1)};
      double len = std::hypot(grad.x, grad.y);
      Vec2 shift = len > 1e-9 ? grad * ((inset + 0.5 - at(q.x, q.y)) / len) : Vec2{};
      p.pts.push_back(Vec2{double(q.x + origin.x), double(q.y + origin.y)} + shift);
    }
    p.pts.push_back(p.pts.front());
    out.push_back(std::move(p));
  }
  return out;
}

// The ink a mark's strokes cover (0/1, with a one-pixel frame; `origin` is the frame's corner):
// the mark, and the ink around it, within the reach of its tangle (remnant_length), that no
// other stroke covers: the teeth of a zig-zag scribbled over until it filled in stick out of
// the mark's core, and the spurs thinning ran into them were pruned or dropped as its tangle.
// `to_kept`: each pixel's distance from the strokes that stay.
cv::Mat cover_domain(const cv::Mat& labels, int label, const Mark& m, const cv::Mat& binary, const cv::Mat& to_kept,
                     const FilledOptions& opt, cv::Point& origin) {
  const int reach = static_cast<int>(std::ceil(opt.remnant_length)) + 1;
  cv::Rect framed(m.box.x - reach, m.box.y - reach, m.box.width + 2 * reach, m.box.height + 2 * reach);
  cv::Rect inside = framed & cv::Rect(0, 0, labels.cols, labels.rows);
  origin = framed.tl();
  cv::Mat mark = labels(inside) == label, to_mark;
  cv::distanceTransform(mark == 0, to_mark, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  const float uncovered = static_cast<float>(opt.stroke_width / 2 + 1);
  cv::Mat around = (binary(inside) != 0) & (labels(inside) == 0) & (to_kept(inside) > uncovered) &
                   (to_mark <= static_cast<float>(opt.remnant_length));
  // Only the ink joined to the mark is its.
  cv::Mat parts;
  const int n = cv::connectedComponents(mark | around, parts, 8, CV_32S);
  std::vector<uchar> joined(n, 0);
  for (int y = 0; y < mark.rows; ++y)
    for (int x = 0; x < mark.cols; ++x)
      if (mark.at<uchar>(y, x)) joined[parts.at<int>(y, x)] = 1;
  // The frame lies beyond the tangle's reach of the mark's box: it is paper.
  cv::Mat mask = cv::Mat::zeros(framed.size(), CV_8U);
  cv::Mat into = mask(inside - framed.tl());
  for (int y = 0; y < parts.rows; ++y)
    for (int x = 0; x < parts.cols; ++x) into.at<uchar>(y, x) = joined[parts.at<int>(y, x)];
  return mask;
}

// The part `c` of `parts` in its box with a frame of one pixel (0/255), and the box.
cv::Mat part_of(const cv::Mat& parts, const cv::Mat& stats, int c, cv::Rect& box) {
  box = cv::Rect(stats.at<int>(c, cv::CC_STAT_LEFT) - 1, stats.at<int>(c, cv::CC_STAT_TOP) - 1,
                 stats.at<int>(c, cv::CC_STAT_WIDTH) + 2, stats.at<int>(c, cv::CC_STAT_HEIGHT) + 2);
  return parts(box) == c;
}

// The strokes of a pen w wide that together cover `mask` (0/1 with a frame of paper, which
// every part of it fits in): rings a pen width apart, the first half a width inside the edge,
// each where the ink inside it is at least half a width deep (so that the ring has an inside);
// then, round after round, the ink still out of the pen's reach is covered the same way, a
// part of it narrower than the pen by its medial path, or a dot at its deepest pixel. Ink
// within a pixel of the reach is left: the strokes' pixels are good to half a pixel.
std::vector<Piece> cover(const cv::Mat& mask, cv::Point origin, const FilledOptions& opt, int passes) {
  const double w = opt.stroke_width, reach = std::max(0.5, w / 2 - 0.5);
  std::vector<Piece> out;
  auto add_rings = [&](const cv::Mat& d, const cv::Mat& region, cv::Point corner, double inset) {
    std::vector<Piece> rings = outlines(d, region, corner, inset);
    for (Piece& p : rings) smooth(p.pts, true, passes);
    out.insert(out.end(), rings.begin(), rings.end());
    return !rings.empty();
  };
  cv::Mat d;
  cv::distanceTransform(mask, d, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  for (double inset = w / 2;; inset += w) {
    cv::Mat parts, stats, centroids;
    const int n = cv::connectedComponentsWithStats(d >= inset, parts, stats, centroids, 8, CV_32S);
    if (n <= 1) break;
    for (int c = 1; c < n; ++c) {
      cv::Rect box;
      cv::Mat part = part_of(parts, stats, c, box);
      double most = 0;
      cv::minMaxLoc(d(box), nullptr, &most, nullptr, nullptr, part);
      if (most - 0.5 >= inset + w / 2) add_rings(d(box), part, origin + box.tl(), inset);
    }
  }
  cv::Mat drawn(mask.size(), CV_8U, cv::Scalar(255)), to_drawn(mask.size(), CV_32F, cv::Scalar(1e9));
  for (size_t done = 0;;) {
    for (; done < out.size(); ++done) {
      std::vector<cv::Point> px;
      for (Vec2 p : out[done].pts)
        px.emplace_back(static_cast<int>(std::lround(p.x)) - origin.x, static_cast<int>(std::lround(p.y)) - origin.y);
      cv::polylines(drawn, px, false, cv::Scalar(0));
      if (px.size() == 1) cv::circle(drawn, px[0], 0, cv::Scalar(0), cv::FILLED);
    }
    if (!out.empty()) cv::distanceTransform(drawn, to_drawn, cv::DIST_L2, cv::DIST_MASK_PRECISE);
    cv::Mat parts, stats, centroids;
    const int n = cv::connectedComponentsWithStats(mask & (to_drawn > reach), parts, stats, centroids, 8, CV_32S);
    for (int c = 1; c < n; ++c) {
      cv::Rect box;
      cv::Mat part = part_of(parts, stats, c, box), depth;
      const cv::Point corner = origin + box.tl();
      double farthest = 0, most = 0;
      cv::minMaxLoc(to_drawn(box), nullptr, &farthest, nullptr, nullptr, part);
      if (farthest <= w / 2 + 1) continue;
      cv::distanceTransform(part, depth, cv::DIST_L2, cv::DIST_MASK_PRECISE);
      cv::Point deepest;
      cv::minMaxLoc(depth, nullptr, &most, nullptr, &deepest);
      if (most - 0.5 > w / 2 && add_rings(depth, part, corner, w / 2)) continue;
      Polyline path = longest_path(part, corner);
      if (path.size() < 2 || polyline_length(path) < opt.dot_length) {
        out.push_back(Piece{{Vec2{double(deepest.x + corner.x), double(deepest.y + corner.y)}}, false});
        continue;
      }
      smooth(path, false, passes);
      out.push_back(Piece{path, false});
    }
    if (done == out.size()) break;  // what is left lies within a pixel of the reach
  }
  return out;
}

// The strokes that stand for a mark (see replace_filled_marks); its record's drawn_as says which.
std::vector<Piece> mark_pieces(const cv::Mat& labels, int label, Mark& m, const cv::Mat& binary, const cv::Mat& to_kept,
                               const FilledOptions& opt) {
  const int passes = std::max(1, static_cast<int>(std::lround(opt.stroke_width / 2)));
  cv::Point origin;
  if (!m.record.loop) {
    m.record.drawn_as = "cover";
    return cover(cover_domain(labels, label, m, binary, to_kept, opt, origin), origin, opt, passes);
  }
  cv::Mat mask = mark_mask(labels, label, m, origin), d;
  cv::distanceTransform(mask, d, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  std::vector<Piece> loops = outlines(d, mask != 0, origin, opt.stroke_width / 2);
  for (Piece& p : loops) smooth(p.pts, true, passes);
  m.record.drawn_as = "outline";
  if (loops.empty()) m.record.drawn_as = "dot", loops.push_back(Piece{{m.centroid}, false});
  return loops;
}

// Distance from every pixel to the nearest edge (but those `left_out`) or dot of the graph, or run.
cv::Mat distance_to_strokes(const StrokeGraph& g, const std::vector<Run>& runs, cv::Size size,
                            const std::vector<bool>& left_out = {}) {
  cv::Mat drawn(size, CV_8U, cv::Scalar(255));
  auto pixel = [](Vec2 p) { return cv::Point(static_cast<int>(std::lround(p.x)), static_cast<int>(std::lround(p.y))); };
  auto draw = [&](const Trace& t, bool closed) {
    std::vector<cv::Point> px;
    for (Vec2 p : t.pts) px.push_back(pixel(p));
    cv::polylines(drawn, px, closed, cv::Scalar(0));
  };
  for (size_t k = 0; k < g.edges.size(); ++k)
    if (g.edges[k].alive && !g.edges[k].trace.pts.empty() && !(k < left_out.size() && left_out[k]))
      draw(g.edges[k].trace, g.edges[k].closed);
  for (const Run& r : runs)
    if (!r.trace.pts.empty()) draw(r.trace, false);
  for (const Node& n : g.nodes)
    if (n.alive && n.dot) cv::circle(drawn, pixel(n.p), 0, cv::Scalar(0), cv::FILLED);
  cv::Mat d;
  cv::distanceTransform(drawn, d, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  return d;
}

// Adds the small loops filled in (FilledOptions::loop_diameter) to `marks` and `labels`.
void add_filled_loops(const StrokeGraph& g, const cv::Mat& to_paper, const FilledOptions& opt, std::vector<Mark>& marks,
                      cv::Mat& labels) {
  FilledOptions small = opt;
  small.min_diameter = opt.loop_diameter;
  small.core_radius = opt.loop_diameter / 2;
  cv::Mat found_labels;
  std::vector<Mark> found = find_marks(to_paper, small, found_labels);
  if (found.empty()) return;
  // A branch that ends free in a blob, outside it for less than the tangle's reach, is
  // thinning's spur into it (a curl's loop filled in is left with one): it reaches the blob's
  // core but no stroke ran through it there.
  std::vector<bool> spur(g.edges.size(), false);
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge& e = g.edges[k];
    if (!e.alive || e.closed) continue;
    bool ends_in = false;
    for (int n : {e.n0, e.n1}) ends_in = ends_in || (g.nodes[n].degree() == 1 && label_at(found_labels, g.nodes[n].p) > 0);
    if (!ends_in) continue;
    double outside = 0;
    for (size_t i = 1; i < e.trace.pts.size(); ++i)
      if (!label_at(found_labels, e.trace.pts[i - 1]) || !label_at(found_labels, e.trace.pts[i]))
        outside += dist(e.trace.pts[i - 1], e.trace.pts[i]);
    spur[k] = outside < opt.remnant_length;
  }
  const cv::Mat to_stroke = distance_to_strokes(g, {}, to_paper.size(), spur);
  const float core = static_cast<float>(opt.stroke_width / 2 + 0.5), reach = static_cast<float>(opt.loop_reach);
  if (labels.empty()) labels = cv::Mat::zeros(to_paper.size(), CV_32S);
  for (size_t k = 0; k < found.size(); ++k) {
    const int label = static_cast<int>(k) + 1;
    if (found[k].record.diameter_px >= opt.min_diameter) continue;  // a filled mark, or part of one
    std::vector<float> cored;  // distances of the core's pixels from the strokes
    bool taken = false;
    const cv::Rect& box = found[k].box;
    for (int y = box.y; y < box.y + box.height; ++y)
      for (int x = box.x; x < box.x + box.width; ++x) {
        if (found_labels.at<int>(y, x) != label) continue;
        taken |= labels.at<int>(y, x) != 0;
        if (to_paper.at<float>(y, x) >= core) cored.push_back(to_stroke.at<float>(y, x));
      }
    const auto missed = std::count_if(cored.begin(), cored.end(), [&](float d) { return d > reach; });
    if (taken || cored.empty() || 3 * missed < static_cast<long>(cored.size())) continue;
    marks.push_back(found[k]);
    MarkRecord& r = marks.back().record;
    r.loop = true;
    r.unreached = static_cast<double>(missed) / cored.size();
    // At least `third` core pixels (a third, rounded up) lie farther than the reach while it is
    // under the distance of the `third`-farthest.
    const size_t third = (cored.size() + 2) / 3;
    std::nth_element(cored.begin(), cored.begin() + (third - 1), cored.end(), std::greater<float>());
    r.flip_reach_px = cored[third - 1];
    labels.setTo(static_cast<int>(marks.size()), found_labels == label);
  }
}

Trace slice(const Trace& t, size_t i, size_t j) {
  Trace out;
  for (size_t k = i; k < j; ++k) out.push(t.pts[k], t.width[k]);
  return out;
}

// Cuts every edge where it enters a mark, removes it from the graph and returns the stretches
// outside the marks. A closed edge is first restarted inside a mark.
std::vector<Run> cut_at_marks(StrokeGraph& g, const cv::Mat& labels) {
  std::vector<Run> runs;
  for (size_t e = 0; e < g.edges.size(); ++e) {
    if (!g.edges[e].alive) continue;
    Edge edge = g.edges[e];
    std::vector<int> in;
    for (Vec2 p : edge.trace.pts) in.push_back(label_at(labels, p));
    auto first = std::find_if(in.begin(), in.end(), [](int l) { return l > 0; });
    if (first == in.end()) continue;
    if (edge.closed) {
      size_t k = first - in.begin(), n = in.size() - 1;
      Trace t = slice(edge.trace, k, n);
      t.append(slice(edge.trace, 0, k + 1));
      std::rotate(in.begin(), in.begin() + k, in.begin() + n);
      in[n] = in[0];
      edge.trace = std::move(t);
    }
    g.remove_edge(static_cast<int>(e));
    for (size_t i = 0; i < in.size();) {
      if (in[i]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < in.size() && !in[j]) ++j;
      Run r{slice(edge.trace, i, j)};
      if (i == 0) r.node[0] = edge.n0;
      else r.mark[0] = in[i - 1];
      if (j == in.size()) r.node[1] = edge.n1;
      else r.mark[1] = in[j];
      runs.push_back(std::move(r));
      i = j;
    }
  }
  return runs;
}

// Drops the runs that are the marks' tangle: short ones ending free, or back at their mark
// (until none is left: dropping one may free another's end).
void drop_remnants(StrokeGraph& g, std::vector<Run>& runs, const std::vector<Mark>& marks, const FilledOptions& opt) {
  std::map<int, int> degree;
  for (const Run& r : runs)
    for (int n : r.node)
      if (n >= 0) ++degree[n];
  // A small loop's blob has no tangle: thinning's bumps off it were pruned as spurs, and what
  // leaves it free is the stroke's own tail, unless under half a width long.
  auto max_length = [&](const Run& r) {
    const int label = r.mark[0] ? r.mark[0] : r.mark[1];
    return marks[label - 1].record.loop ? opt.stroke_width / 2 : opt.remnant_length;
  };
  for (size_t before = runs.size() + 1; runs.size() < before;) {
    before = runs.size();
    std::erase_if(runs, [&](const Run& r) {
    if ((!r.mark[0] && !r.mark[1]) || r.trace.length() >= max_length(r)) return false;
    auto free = [&](int end) { return r.node[end] >= 0 && degree[r.node[end]] + g.nodes[r.node[end]].degree() == 1; };
    bool remnant = (r.mark[0] && (free(1) || r.mark[1] == r.mark[0])) || (r.mark[1] && free(0));
    if (remnant)
      for (int n : r.node)
        if (n >= 0) --degree[n];
    return remnant;
    });
  }
}

// The arc length along `pts` of its point nearest to p.
double nearest_arc_length(const Polyline& pts, Vec2 p) {
  double best = dist(pts.front(), p), at = 0, s = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    Vec2 a = pts[i - 1], b = pts[i];
    double l = dist(a, b);
    double t = l > 0 ? std::clamp(dot(p - a, b - a) / (l * l), 0.0, 1.0) : 0.0;
    double d = dist(a + (b - a) * t, p);
    if (d < best) best = d, at = s + t * l;
    s += l;
  }
  return at;
}

// The part of `pts` from arc length s0 to s1 (s0 <= s1), its ends interpolated.
Trace between(const Polyline& pts, double s0, double s1) {
  Trace t;
  t.push(point_at_length(pts, s0));
  double s = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    s += dist(pts[i - 1], pts[i]);
    if (s > s0 && s < s1) t.push(pts[i]);
  }
  t.push(point_at_length(pts, s1));
  return t;
}

// Groups the ports on one piece (sorted by s) into attachment points, each within `merge`
// of the previous one's first port; an open piece's ends absorb the ports near them. Returns
// the arc length of each group and sets each port's `node` to its group's index.
std::vector<double> attach_points(const std::vector<Port*>& ports, const Piece& piece, double merge) {
  const double length = polyline_length(piece.pts);
  std::vector<double> at;
  for (Port* p : ports) {
    double s = p->s;
    if (!piece.closed) s = s < merge ? 0 : length - s < merge ? length : s;
    if (at.empty() || s - at.back() >= merge) at.push_back(s);
    p->node = static_cast<int>(at.size()) - 1;
  }
  // Around a loop, the last group may lie within reach of the first.
  if (piece.closed && at.size() > 1 && at.front() + length - at.back() < merge) {
    for (Port* p : ports)
      if (p->node == static_cast<int>(at.size()) - 1) p->node = 0;
    at.pop_back();
  }
  return at;
}

void add_filled_edge(StrokeGraph& g, Trace t, int n0, int n1, const MarkRecord& mark) {
  Edge e;
  e.trace = std::move(t);
  e.n0 = n0, e.n1 = n1;
  e.closed = n0 == n1 && e.trace.pts.size() > 1;
  e.filled = true;
  e.mark = mark;
  g.add_edge(std::move(e));
}

// Adds one piece of a mark as filled edges split at its ports, whose `node` it sets.
void add_piece(StrokeGraph& g, const Piece& piece, std::vector<Port*> ports, double merge, const MarkRecord& mark) {
  std::stable_sort(ports.begin(), ports.end(), [](const Port* a, const Port* b) { return a->s < b->s; });
  if (piece.pts.size() == 1) {
    int n = g.add_node(piece.pts[0]);
    for (Port* p : ports) p->node = n;
    if (ports.empty()) g.nodes[n].dot = g.nodes[n].filled = true, g.nodes[n].mark = mark;
    else add_filled_edge(g, Trace{piece.pts, {kUnknownWidth}}, n, n, mark);
    return;
  }
  std::vector<double> at = attach_points(ports, piece, merge);
  const double length = polyline_length(piece.pts);
  Trace whole;
  for (Vec2 q : piece.pts) whole.push(q);
  if (piece.closed && at.empty()) {
    int n = g.add_node(piece.pts[0]);
    g.nodes[n].loop = true;
    add_filled_edge(g, whole, n, n, mark);
    return;
  }
  if (!piece.closed) {  // the path's ends are nodes too
    if (at.empty() || at.front() > 0) {
      at.insert(at.begin(), 0);
      for (Port* p : ports) ++p->node;
    }
    if (at.back() < length) at.push_back(length);
  }
  std::vector<int> nodes;
  for (double s : at) nodes.push_back(g.add_node(point_at_length(piece.pts, s)));
  for (Port* p : ports) p->node = nodes[p->node];
  if (!piece.closed) {
    for (size_t k = 1; k < at.size(); ++k) add_filled_edge(g, between(piece.pts, at[k - 1], at[k]), nodes[k - 1], nodes[k], mark);
    return;
  }
  Polyline twice = piece.pts;
  twice.insert(twice.end(), piece.pts.begin() + 1, piece.pts.end());
  for (size_t k = 0; k < at.size(); ++k) {
    double s1 = k + 1 < at.size() ? at[k + 1] : at[0] + length;
    add_filled_edge(g, between(twice, at[k], s1), nodes[k], nodes[(k + 1) % at.size()], mark);
  }
}

// Adds a run back as an edge, each cut end carried straight on to its port's node.
void add_run(StrokeGraph& g, Run r, const std::map<std::pair<int, int>, int>& port_node, int index) {
  for (int end : {0, 1}) {
    if (r.node[end] >= 0) continue;
    r.node[end] = port_node.at({index, end});
    Trace joint{{g.nodes[r.node[end]].p}, {kUnknownWidth}};
    if (end == 0) joint.append(r.trace), r.trace = std::move(joint);
    else r.trace.append(joint);
  }
  Edge e;
  e.trace = std::move(r.trace);
  e.n0 = r.node[0], e.n1 = r.node[1];
  e.closed = e.n0 == e.n1;
  g.add_edge(std::move(e));
}

}  // namespace

int replace_filled_marks(StrokeGraph& g, const cv::Mat& binary, const FilledOptions& opt) {
  const cv::Mat framed = framed_ink(binary);
  if (!may_hold_marks(framed, opt)) return 0;
  cv::Mat to_paper = distance_to_paper(framed), labels;
  std::vector<Mark> marks = find_marks(to_paper, opt, labels);
  if (opt.loop_diameter > 0 && opt.loop_diameter < opt.min_diameter) add_filled_loops(g, to_paper, opt, marks, labels);
  if (marks.empty()) return 0;
  const size_t first_node = g.nodes.size();
  std::vector<Run> runs = cut_at_marks(g, labels);
  drop_remnants(g, runs, marks, opt);
  const cv::Mat to_kept = distance_to_strokes(g, runs, labels.size());
  std::vector<std::vector<Piece>> pieces;
  for (size_t m = 0; m < marks.size(); ++m) pieces.push_back(mark_pieces(labels, int(m) + 1, marks[m], binary, to_kept, opt));
  for (Node& n : g.nodes)
    if (n.dot && label_at(labels, n.p)) n.dot = false;  // a dot inside a mark is part of it

  // Every cut end attaches to the nearest point of its mark's strokes.
  std::vector<Port> ports;
  for (size_t r = 0; r < runs.size(); ++r)
    for (int end : {0, 1}) {
      if (!runs[r].mark[end]) continue;
      Port p{static_cast<int>(r), end};
      const Vec2 at = end ? runs[r].trace.pts.back() : runs[r].trace.pts.front();
      double best = 1e300;
      const auto& mine = pieces[runs[r].mark[end] - 1];
      for (size_t k = 0; k < mine.size(); ++k) {
        double s = nearest_arc_length(mine[k].pts, at);
        double d = dist(point_at_length(mine[k].pts, s), at);
        if (d < best) best = d, p.piece = static_cast<int>(k), p.s = s;
      }
      ports.push_back(p);
    }
  for (size_t m = 0; m < marks.size(); ++m)
    for (size_t k = 0; k < pieces[m].size(); ++k) {
      std::vector<Port*> mine;
      for (Port& p : ports)
        if (runs[p.run].mark[p.end] == int(m) + 1 && p.piece == int(k)) mine.push_back(&p);
      add_piece(g, pieces[m][k], mine, opt.stroke_width, marks[m].record);
    }
  std::map<std::pair<int, int>, int> port_node;
  for (const Port& p : ports) port_node[{p.run, p.end}] = p.node;
  for (size_t r = 0; r < runs.size(); ++r) add_run(g, std::move(runs[r]), port_node, static_cast<int>(r));
  for (size_t n = 0; n < first_node; ++n) g.retire_node_if_bare(static_cast<int>(n));
  g.dissolve_pass_through_nodes();
  return static_cast<int>(marks.size());
}

}  // namespace sv::graph
