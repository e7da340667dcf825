#include "graph/trace.hpp"

#include <vector>

namespace sv::graph {
namespace {

// A loop that leaves a junction cluster and returns to it within this many pixels encloses
// no paper: it is part of the cluster.
constexpr double kMinLoopLength = 4;

// The skeleton in a frame of one paper pixel, indexed flat, so no bounds checks are needed.
struct Grid {
  int w, h, stride;
  std::vector<uchar> on, count;
  std::vector<int> node;
  std::vector<uchar> visited;
  int off[8];

  explicit Grid(const cv::Mat& skel)
      : w(skel.cols), h(skel.rows), stride(skel.cols + 2),
        on(static_cast<size_t>(stride) * (h + 2), 0), count(on.size(), 0), node(on.size(), -1),
        visited(on.size(), 0) {
    const int dx[8] = {1, 1, 0, -1, -1, -1, 0, 1}, dy[8] = {0, -1, -1, -1, 0, 1, 1, 1};
    for (int k = 0; k < 8; ++k) off[k] = dy[k] * stride + dx[k];
    for (int y = 0; y < h; ++y) {
      const uchar* row = skel.ptr<uchar>(y);
      for (int x = 0; x < w; ++x) on[index(x, y)] = row[x] ? 1 : 0;
    }
    for (size_t i = stride; i + stride < on.size(); ++i)
      if (on[i])
        for (int k = 0; k < 8; ++k) count[i] += on[i + off[k]];
  }
  size_t index(int x, int y) const { return static_cast<size_t>(y + 1) * stride + x + 1; }
  Vec2 pos(size_t i) const { return {double(int(i % stride) - 1), double(int(i / stride) - 1)}; }
  // The skeleton neighbour of a chain pixel other than `prev`.
  size_t next(size_t cur, size_t prev) const {
    for (int k = 0; k < 8; ++k) {
      size_t j = cur + off[k];
      if (on[j] && j != prev) return j;
    }
    return prev;
  }
};

// One node per end pixel, isolated pixel and 8-connected cluster of junction pixels, in
// raster order of their first pixel.
void make_nodes(Grid& g, StrokeGraph& sg) {
  std::vector<size_t> stack, cluster;
  for (size_t i = g.stride; i + g.stride < g.on.size(); ++i) {
    if (!g.on[i] || g.count[i] == 2 || g.node[i] >= 0) continue;
    if (g.count[i] < 2) {
      g.node[i] = sg.add_node(g.pos(i));
      continue;
    }
    int id = sg.add_node({});
    cluster.clear();
    stack = {i};
    g.node[i] = id;
    while (!stack.empty()) {
      size_t c = stack.back();
      stack.pop_back();
      cluster.push_back(c);
      for (int k = 0; k < 8; ++k) {
        size_t j = c + g.off[k];
        if (g.on[j] && g.count[j] > 2 && g.node[j] < 0) g.node[j] = id, stack.push_back(j);
      }
    }
    Vec2 sum;
    for (size_t c : cluster) sum = sum + g.pos(c);
    sg.nodes[id].p = sum / double(cluster.size());
  }
}

// Walks from node pixel `start` through chain pixels, first step `first`, to the next node.
void trace_chain(Grid& g, StrokeGraph& sg, size_t start, size_t first) {
  Edge e;
  e.n0 = g.node[start];
  e.trace.push(g.pos(start));
  size_t prev = start, cur = first;
  while (g.node[cur] < 0) {
    g.visited[cur] = 1;
    e.trace.push(g.pos(cur));
    size_t nxt = g.next(cur, prev);
    prev = cur;
    cur = nxt;
  }
  e.trace.push(g.pos(cur));
  e.n1 = g.node[cur];
  if (e.n0 == e.n1 && e.trace.length() < kMinLoopLength) return;
  sg.add_edge(std::move(e));
}

// A cycle of chain pixels with no node: a loop anchored at its first pixel.
void trace_cycle(Grid& g, StrokeGraph& sg, size_t start) {
  Edge e;
  e.n0 = e.n1 = sg.add_node(g.pos(start));
  sg.nodes[e.n0].loop = true;
  e.closed = true;
  e.trace.push(g.pos(start));
  g.visited[start] = 1;
  size_t prev = start, cur = g.next(start, start);
  while (cur != start) {
    g.visited[cur] = 1;
    e.trace.push(g.pos(cur));
    size_t nxt = g.next(cur, prev);
    prev = cur;
    cur = nxt;
  }
  e.trace.push(g.pos(start));
  sg.add_edge(std::move(e));
}

}  // namespace

StrokeGraph trace_skeleton(const cv::Mat& skeleton) {
  Grid g(skeleton);
  StrokeGraph sg;
  make_nodes(g, sg);
  for (size_t i = g.stride; i + g.stride < g.on.size(); ++i) {
    if (g.node[i] < 0) continue;
    for (int k = 0; k < 8; ++k) {
      size_t j = i + g.off[k];
      if (!g.on[j]) continue;
      if (g.node[j] >= 0) {
        if (g.node[j] != g.node[i] && i < j) {
          Edge e;
          e.n0 = g.node[i], e.n1 = g.node[j];
          e.trace.push(g.pos(i));
          e.trace.push(g.pos(j));
          sg.add_edge(std::move(e));
        }
      } else if (!g.visited[j]) {
        trace_chain(g, sg, i, j);
      }
    }
  }
  for (size_t i = g.stride; i + g.stride < g.on.size(); ++i)
    if (g.on[i] && g.node[i] < 0 && !g.visited[i]) trace_cycle(g, sg, i);
  // Isolated pixels and junction clusters left without chains are dots.
  for (Node& n : sg.nodes)
    if (n.ends.empty()) n.dot = true;
  return sg;
}

}  // namespace sv::graph
