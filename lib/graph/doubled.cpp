#include "graph/doubled.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "raster/box.hpp"

namespace sv::graph {
namespace {

// Share of each side's length that must lie near the other side.
constexpr double kMinShare = 0.8;
// A side at least this many times as long as the sides are apart: a stroke, not a round loop.
constexpr double kMinElongation = 5;
// A sliver of paper between two passes is at least this many times as long as it is wide.
constexpr double kMinSliverElongation = 4;

Vec2 nearest_on(const Polyline& p, Vec2 q) {
  Vec2 best = p.front();
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    Vec2 d = p[i + 1] - p[i];
    double l2 = dot(d, d), u = l2 > 0 ? std::clamp(dot(q - p[i], d) / l2, 0.0, 1.0) : 0;
    Vec2 x = p[i] + d * u;
    if (dist(q, x) < dist(q, best)) best = x;
  }
  return best;
}

// The share of a's points within max_sep of b, and their median distance to it.
std::pair<double, double> closeness(const Polyline& a, const Polyline& b, double max_sep) {
  std::vector<double> d;
  for (Vec2 x : a) d.push_back(dist(x, nearest_on(b, x)));
  double near = static_cast<double>(std::count_if(d.begin(), d.end(), [&](double v) { return v <= max_sep; }));
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return {near / d.size(), d[d.size() / 2]};
}

// Whether p and q (points at most 1 px apart) are two passes of one stroke; see
// collapse_double_strokes.
bool passes_of_one_stroke(const Polyline& p, const Polyline& q, double max_sep) {
  if (p.size() < 3 || q.size() < 3) return false;
  auto [share_p, sep_p] = closeness(p, q, max_sep);
  auto [share_q, sep_q] = closeness(q, p, max_sep);
  double shorter = std::min(polyline_length(p), polyline_length(q));
  return share_p >= kMinShare && share_q >= kMinShare && shorter >= kMinElongation * std::max({sep_p, sep_q, 1.0});
}

// The midline of two passes run the same way: each point of p halfway to q.
Trace midline(const Polyline& p, const Polyline& q) {
  Trace t;
  for (Vec2 x : p) t.push((x + nearest_on(q, x)) / 2);
  return t;
}

// Twice the area a closed polyline encloses, over its length: the mean distance between the
// sides of a thin loop.
double mean_width(const Polyline& p) {
  double area2 = 0;
  for (size_t i = 0; i + 1 < p.size(); ++i) area2 += cross(p[i], p[i + 1]);
  area2 += cross(p.back(), p.front());
  return std::abs(area2) / std::max(polyline_length(p), 1e-9);
}

// A thin loop (a loop edge, or an edge from a junction back to it) becomes an edge along
// its midline from tip to tip (from the junction to the far tip).
void collapse_loop(StrokeGraph& g, int e, double max_sep) {
  const Edge edge = g.edges[e];
  const Polyline pts = densify(edge.trace.pts, 1.0);  // 1 px apart: a count of points is a length
  if (pts.size() < 6 || mean_width(pts) > max_sep) return;
  // The tips: the loop's two farthest points; a junction is one tip itself.
  size_t i = 0, j = 0;
  for (size_t a = 0; a < (edge.closed ? pts.size() : 1); ++a)
    for (size_t b = a + 1; b < pts.size(); ++b)
      if (dist(pts[a], pts[b]) > dist(pts[i], pts[j])) i = a, j = b;
  Polyline p(pts.begin() + i, pts.begin() + j + 1), q(pts.begin() + j, pts.end());
  if (edge.closed) q.insert(q.end(), pts.begin() + 1, pts.begin() + i + 1);
  std::reverse(q.begin(), q.end());
  if (!passes_of_one_stroke(p, q, max_sep)) return;
  Trace mid = midline(p, q);
  g.remove_edge(e);
  int first = edge.n0;  // a junction: the midline starts there, as both sides do
  if (edge.closed) g.nodes[edge.n0].alive = false, first = g.add_node(mid.pts.front());
  const int last = g.add_node(mid.pts.back());
  g.add_edge(Edge{std::move(mid), first, last});
}

// The node the merged pass starts from where the passes start at nodes a and b: a shared
// node, else the junction of the two, else the first; -1 for two different junctions.
int merged_node(const StrokeGraph& g, int a, int b) {
  if (a == b || g.nodes[b].degree() == 1) return a;
  return g.nodes[a].degree() == 1 ? b : -1;
}

// Two open edges that are passes of one stroke become one along their midline.
void collapse_pair(StrokeGraph& g, int ea, int eb, double max_sep) {
  const Edge a = g.edges[ea];
  Edge b = g.edges[eb];
  if (a.n0 == a.n1 || b.n0 == b.n1) return;
  const Polyline &pa = a.trace.pts, &pb = b.trace.pts;
  bool flip = b.n1 == a.n0 || b.n0 == a.n1;
  if (b.n0 != a.n0 && b.n1 != a.n1 && !flip)
    flip = dist(pa.front(), pb.back()) + dist(pa.back(), pb.front()) < dist(pa.front(), pb.front()) + dist(pa.back(), pb.back());
  if (flip) b.trace.reverse(), std::swap(b.n0, b.n1);
  const int n0 = merged_node(g, a.n0, b.n0), n1 = merged_node(g, a.n1, b.n1);
  if (n0 < 0 || n1 < 0 || n0 == n1) return;
  // Cheap test first: the middle of one lies near the other.
  const double la = a.trace.length(), lb = b.trace.length();
  if (std::max(la, lb) > 2 * std::min(la, lb)) return;
  if (dist(point_at_length(pa, la / 2), nearest_on(b.trace.pts, point_at_length(pa, la / 2))) > max_sep) return;
  const Polyline p = densify(pa, 1.0), q = densify(b.trace.pts, 1.0);
  if (!passes_of_one_stroke(p, q, max_sep)) return;
  Trace mid = midline(p, q);
  g.remove_edge(ea);
  g.remove_edge(eb);
  for (int n : {a.n0, a.n1, b.n0, b.n1}) g.retire_node_if_bare(n);
  // A kept junction is where the pass starts; a kept free end moves to the midline's end.
  for (auto [n, front] : {std::pair{n0, true}, std::pair{n1, false}}) {
    g.nodes[n].alive = true;
    Vec2& tip = front ? mid.pts.front() : mid.pts.back();
    if (g.nodes[n].degree() == 0) g.nodes[n].p = tip;
    else tip = g.nodes[n].p;
  }
  g.add_edge(Edge{std::move(mid), n0, n1});
}

}  // namespace

int fill_slivers(cv::Mat& binary, double max_width, double min_length) {
  // Enclosed paper lies within the ink's bounding box (a paper pixel beyond it sees the image's
  // border along its row or column), so only the box and a frame of one pixel are labelled: a
  // region that touches the frame, or the image's border, is open paper. The margins around a
  // drawing, most of what labelling the page cost, are left out.
  const cv::Rect ink = cv::boundingRect(binary);
  if (ink.empty()) return 0;
  const cv::Rect crop = grown_within(ink, 1, binary.size());
  cv::Mat paper = binary == 0, labels;
  const int n = cv::connectedComponents(paper(crop), labels, 4, CV_32S);
  // Each region's box (x0, y0, x1, y1, exclusive; in the image) and area, a run of one label
  // at a time.
  std::vector<std::array<int, 4>> box(n, {binary.cols, binary.rows, 0, 0});
  std::vector<int> area(n, 0);
  for (int y = 0; y < crop.height; ++y) {
    const int* lab = labels.ptr<int>(y);
    for (int x = 0; x < crop.width;) {
      const int l = lab[x], from = x;
      while (x < crop.width && lab[x] == l) ++x;
      auto& b = box[l];
      b[0] = std::min(b[0], crop.x + from), b[1] = std::min(b[1], crop.y + y);
      b[2] = std::max(b[2], crop.x + x), b[3] = std::max(b[3], crop.y + y + 1);
      area[l] += x - from;
    }
  }
  // A paper pixel's distance to ink is half the region's width there, plus half a pixel: a
  // region is at most max_width wide where no pixel is farther than `reach` from ink. Such a
  // pixel's nearest ink lies within `reach`, so the distance transform of the region's box grown
  // by `grow` has it exactly, and shows any farther pixel as farther; the open paper, most of
  // the image, is never transformed.
  const double reach = (max_width + 1) / 2;
  const int grow = static_cast<int>(std::ceil(reach)) + 2;
  std::vector<bool> fill(n, false);
  int filled = 0;
  for (int l = 1; l < n; ++l) {
    const auto [x0, y0, x1, y1] = box[l];
    if (x0 == crop.x || y0 == crop.y || x1 == crop.br().x || y1 == crop.br().y) continue;  // open paper
    const cv::Rect around = grown_within(cv::Rect(x0, y0, x1 - x0, y1 - y0), grow, binary.size());
    // Euclidean distance is at least the chessboard one: a pixel of the region whose square of
    // half-side k (floor(reach)) is all paper lies at least k + 1 > reach from ink, and the
    // region is too wide. The erosion that finds such pixels costs a fraction of the precise
    // transform, which the large enclosed areas of a drawing (a circle's inside) spent most
    // of this filter's time on. Its square stays within `around` (k < grow); beyond the image
    // it sees paper, as the transform sees no ink there.
    const int k = static_cast<int>(std::floor(reach));
    if (k > 0) {
      cv::Mat core;
      cv::erode(paper(around), core, cv::getStructuringElement(cv::MORPH_RECT, {2 * k + 1, 2 * k + 1}), {-1, -1}, 1,
                cv::BORDER_CONSTANT, cv::Scalar(255));
      bool wide = false;
      for (int y = y0; y < y1 && !wide; ++y) {
        const int* lab = labels.ptr<int>(y - crop.y);
        const uchar* c = core.ptr<uchar>(y - around.y);
        for (int x = x0; x < x1 && !wide; ++x) wide = lab[x - crop.x] == l && c[x - around.x];
      }
      if (wide) continue;
    }
    cv::Mat dist;
    cv::distanceTransform(paper(around), dist, cv::DIST_L2, cv::DIST_MASK_PRECISE);
    float widest = 0;
    for (int y = y0; y < y1; ++y) {
      const int* lab = labels.ptr<int>(y - crop.y);
      const float* d = dist.ptr<float>(y - around.y);
      for (int x = x0; x < x1; ++x)
        if (lab[x - crop.x] == l) widest = std::max(widest, d[x - around.x]);
    }
    // A sliver is also long (area over width) and elongated: a small round hole (the pen's
    // circle of an "i" dot, a hole where strokes meet) stays for the pinhole filter to judge.
    const double width = std::max(1.0, 2.0 * widest - 1);
    const double length = area[l] / width;
    if (width <= max_width && length >= std::max(min_length, kMinSliverElongation * width)) fill[l] = true, ++filled;
  }
  if (filled == 0) return 0;
  for (int y = 0; y < crop.height; ++y)
    for (int x = 0; x < crop.width; ++x)
      if (fill[labels.at<int>(y, x)]) binary.at<uchar>(crop.y + y, crop.x + x) = 1;
  return filled;
}

void collapse_double_strokes(StrokeGraph& g, double max_separation) {
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (g.edges[e].alive && g.edges[e].n0 == g.edges[e].n1) collapse_loop(g, static_cast<int>(e), max_separation);
  for (size_t a = 0; a < g.edges.size(); ++a)
    for (size_t b = a + 1; b < g.edges.size() && g.edges[a].alive; ++b)
      if (g.edges[b].alive) collapse_pair(g, static_cast<int>(a), static_cast<int>(b), max_separation);
  g.dissolve_pass_through_nodes();
}

}  // namespace sv::graph
