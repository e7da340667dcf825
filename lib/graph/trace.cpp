#include "graph/trace.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "raster/scan.hpp"

namespace sv::graph {
namespace {

// A loop that leaves a junction cluster and returns to it within this many pixels encloses
// no paper: it is part of the cluster.
constexpr double kMinLoopLength = 4;

constexpr uchar kOn = 1, kVisited = 2;

// The skeleton image, marked in place as pixels are traced (bit 1). Pixels with exactly two
// skeleton neighbours are chain pixels; all others are node pixels, whose node ids are kept
// in a map (they are few). Pixels are flat indices y * w + x.
struct Grid {
  cv::Mat& img;
  int w, h;
  std::unordered_map<int, int> node;
  std::vector<int> node_pixels;  // in raster order

  explicit Grid(cv::Mat& skel) : img(skel), w(skel.cols), h(skel.rows) {}
  Vec2 pos(int i) const { return {double(i % w), double(i / w)}; }
  uchar& at(int i) const { return img.at<uchar>(i / w, i % w); }
  bool on(int x, int y) const { return x >= 0 && y >= 0 && x < w && y < h && (img.at<uchar>(y, x) & kOn); }
  // Skeleton neighbours of pixel i, in a fixed order; returns how many.
  int neighbours(int i, int out[8]) const {
    static const int dx[8] = {1, 1, 0, -1, -1, -1, 0, 1}, dy[8] = {0, -1, -1, -1, 0, 1, 1, 1};
    int x = i % w, y = i / w, n = 0;
    for (int k = 0; k < 8; ++k)
      if (on(x + dx[k], y + dy[k])) out[n++] = (y + dy[k]) * w + x + dx[k];
    return n;
  }
  int count(int i) const {
    int nb[8];
    return neighbours(i, nb);
  }
  bool is_node(int i) const { return count(i) != 2; }
  int node_of(int i) const {
    auto it = node.find(i);
    return it == node.end() ? -1 : it->second;
  }
  // The skeleton neighbour of a chain pixel other than `prev`.
  int next(int cur, int prev) const {
    int nb[8], n = neighbours(cur, nb);
    for (int k = 0; k < n; ++k)
      if (nb[k] != prev) return nb[k];
    return prev;
  }
};

// One node per end pixel, isolated pixel and 8-connected cluster of junction pixels, in
// raster order of their first pixel.
void make_nodes(Grid& g, StrokeGraph& sg) {
  std::vector<int> stack, cluster;
  for (int y = 0; y < g.h; ++y) {
    const uchar* row = g.img.ptr<uchar>(y);
    const size_t w = static_cast<size_t>(g.w);
    for (size_t xs = next_set(row, 0, w); xs < w; xs = next_set(row, xs + 1, w)) {
      const int x = static_cast<int>(xs), i = y * g.w + x;
      int c = g.count(i);
      if (c == 2 || g.node.count(i)) continue;
      if (c < 2) {
        g.node[i] = sg.add_node(g.pos(i));
        g.node_pixels.push_back(i);
        continue;
      }
      int id = sg.add_node({});
      cluster.clear();
      stack = {i};
      g.node[i] = id;
      while (!stack.empty()) {
        int p = stack.back();
        stack.pop_back();
        cluster.push_back(p);
        int nb[8], n = g.neighbours(p, nb);
        for (int k = 0; k < n; ++k)
          if (!g.node.count(nb[k]) && g.count(nb[k]) > 2) g.node[nb[k]] = id, stack.push_back(nb[k]);
      }
      Vec2 sum;
      for (int p : cluster) sum = sum + g.pos(p);
      sg.nodes[id].p = sum / double(cluster.size());
      g.node_pixels.insert(g.node_pixels.end(), cluster.begin(), cluster.end());
    }
  }
  std::sort(g.node_pixels.begin(), g.node_pixels.end());
}

// Walks from node pixel `start` through chain pixels, first step `first`, to the next node.
void trace_chain(Grid& g, StrokeGraph& sg, int start, int first) {
  Edge e;
  e.n0 = g.node_of(start);
  e.trace.push(g.pos(start));
  int prev = start, cur = first;
  while (!g.is_node(cur)) {
    g.at(cur) |= kVisited;
    e.trace.push(g.pos(cur));
    int nxt = g.next(cur, prev);
    prev = cur;
    cur = nxt;
  }
  e.trace.push(g.pos(cur));
  e.n1 = g.node_of(cur);
  if (e.n0 == e.n1 && e.trace.length() < kMinLoopLength) return;
  sg.add_edge(std::move(e));
}

// A cycle of chain pixels with no node: a loop anchored at its first pixel.
void trace_cycle(Grid& g, StrokeGraph& sg, int start) {
  Edge e;
  e.n0 = e.n1 = sg.add_node(g.pos(start));
  sg.nodes[e.n0].loop = true;
  e.closed = true;
  e.trace.push(g.pos(start));
  g.at(start) |= kVisited;
  int prev = start, cur = g.next(start, start);
  while (cur != start) {
    g.at(cur) |= kVisited;
    e.trace.push(g.pos(cur));
    int nxt = g.next(cur, prev);
    prev = cur;
    cur = nxt;
  }
  e.trace.push(g.pos(start));
  sg.add_edge(std::move(e));
}

}  // namespace

StrokeGraph trace_skeleton(cv::Mat& skeleton) {
  Grid g(skeleton);
  StrokeGraph sg;
  make_nodes(g, sg);
  for (int i : g.node_pixels) {
    const int id = g.node_of(i);
    int nb[8], n = g.neighbours(i, nb);
    for (int k = 0; k < n; ++k) {
      int j = nb[k];
      if (g.is_node(j)) {
        int other = g.node_of(j);
        if (other != id && i < j) {
          Edge e;
          e.n0 = id, e.n1 = other;
          e.trace.push(g.pos(i));
          e.trace.push(g.pos(j));
          sg.add_edge(std::move(e));
        }
      } else if (!(g.at(j) & kVisited)) {
        trace_chain(g, sg, i, j);
      }
    }
  }
  for (int y = 0; y < g.h; ++y) {
    const uchar* row = skeleton.ptr<uchar>(y);
    const size_t w = static_cast<size_t>(g.w);
    for (size_t x = next_set(row, 0, w); x < w; x = next_set(row, x + 1, w)) {
      const int i = y * g.w + static_cast<int>(x);
      if (row[x] == kOn && !g.is_node(i)) trace_cycle(g, sg, i);
    }
  }
  cv::bitwise_and(skeleton, kOn, skeleton);
  // Isolated pixels and junction clusters left without chains are dots.
  for (Node& n : sg.nodes)
    if (n.ends.empty()) n.dot = true;
  return sg;
}

}  // namespace sv::graph
