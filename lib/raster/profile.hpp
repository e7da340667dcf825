// Stroke cross-sections measured on the ink coverage image (see ink.hpp): sub-pixel stroke
// edges, hence centres and widths, from anti-aliased or blurred ink.
#pragma once
#include <opencv2/core.hpp>

#include "core/geometry.hpp"

namespace sv {

// Coverage in [0, 1] at a sub-pixel position, bilinear; 0 outside the image.
double coverage_at(const cv::Mat& coverage, Vec2 p);

struct CrossSection {
  bool ok = false;
  double offset = 0;  // signed position of the stroke's centre along the normal, from p
  double width = 0;   // edge to edge
};

// Walks from p both ways along the unit normal n until coverage falls below one half (the
// stroke's edges, located by linear interpolation between samples half a pixel apart).
// Not ok when p is not on ink or an edge lies farther than max_reach.
CrossSection cross_section(const cv::Mat& coverage, Vec2 p, Vec2 n, double max_reach);

// Distance from p along the unit direction d to where coverage falls below one half, or -1
// when that is farther than max_reach.
double distance_to_edge(const cv::Mat& coverage, Vec2 p, Vec2 d, double max_reach);

// Radius of the largest disc of ink centred at p: the shortest distance to an edge over 16
// directions (0 when p is not on ink, max_reach when no edge is that close).
double inscribed_radius(const cv::Mat& coverage, Vec2 p, double max_reach);

// The stroke width of a drawing: the median cross-section width at skeleton pixels (CV_8UC1
// 0/1) that lie inside a stroke (exactly two skeleton neighbours), the normal taken across
// the principal axis of the skeleton pixels in a 7x7 window. At most ~20000 pixels are
// sampled, evenly. Returns 0 when no cross-section could be measured.
double median_stroke_width(const cv::Mat& skeleton, const cv::Mat& coverage);
// The same sample's width at `quantile` (0.5: the median; 0.1: the thinnest strokes but a tenth).
double stroke_width_quantile(const cv::Mat& skeleton, const cv::Mat& coverage, double quantile);

// The median of a trace's widths (the upper one of an even count), reordering v; 0 when empty.
double median_of(std::vector<float>& v);

}  // namespace sv
