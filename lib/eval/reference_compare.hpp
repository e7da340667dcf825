// A drawing against a reference (CompareToReference): pixel by pixel against the source's ink,
// and topologically — components, holes, junction degrees and end points of the stroke graph
// each side has when traced the way the skeleton stage traces ink.
#pragma once
#include <map>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "eval/scope.hpp"

namespace sv {

// Paths drawn as the pen draws them, `width` px wide, on a `size` raster: 1 ink, 0 paper.
cv::Mat drawing_mask(const std::vector<Polyline>& paths, cv::Size size, double width);

// Two ink masks (CV_8UC1, nonzero ink) within `tol` px of each other, inside the scope:
// precision the share of the drawing's ink near the reference's, recall the converse, chamfer
// the mean of the two mean distances (the image's diagonal when nothing is drawn, NaN when the
// reference has no ink); `missed` and `spurious` the pixels farther than tol.
struct PixelComparison {
  double precision = 0, recall = 0, f1 = 0, chamfer_px = 0;
  int reference_px = 0, drawn_px = 0, missed_px = 0, spurious_px = 0;
  cv::Mat missed, spurious, agreed;  // CV_8UC1 0/1
};
PixelComparison compare_masks(const cv::Mat& reference, const cv::Mat& drawn, double tol, const Scope& scope);

// The stroke graph the skeleton stage (default settings) traces in a gray raster.
Graph traced_graph(const cv::Mat& gray);

struct Junction {
  Vec2 at;
  int degree = 0;
};

// The topology of a stroke graph within a scope (the edges touching it): connected
// components, holes (independent cycles: edges - vertices + components), the Euler number
// (components - holes), end points (degree 1), junctions (degree 3 or more), dots.
struct Topology {
  int components = 0, holes = 0, dots = 0;
  std::vector<Vec2> end_points;
  std::vector<Junction> junctions;
  std::vector<BBox> component_boxes;
  std::vector<std::vector<Polyline>> component_paths;  // each component's edges
  int euler() const { return components - holes; }
  std::map<int, int> degree_histogram() const;
  json to_json() const;
};
Topology topology_of(const Graph& g, const Scope& scope);

// What differs, each with a location: a count that changed, an end point or a junction present
// on one side only (none of the other side's within match_px, junctions also by degree), a
// component with nothing of the other side within match_px.
struct TopologyDifference {
  std::string feature;  // components, holes, end_point, junction, component
  std::string change;   // more, fewer, gone, new
  Vec2 at;              // the feature's position (a component: its box's centre; a count: the scope's)
  int reference = 0, revision = 0;  // counts, or a junction's degree on its side
  std::string text;
  json to_json() const;
};
std::vector<TopologyDifference> compare_topology(const Topology& reference, const Topology& revision, double match_px,
                                                 Vec2 centre);

}  // namespace sv
