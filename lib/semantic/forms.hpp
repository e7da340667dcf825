// Visual forms: what a person would name in a line drawing, found from geometry alone — groups of
// strokes joined within about a stroke width, the closed regions they bound, the containment tree
// (an eye inside a head, a house inside a frame) and a role for each form inferred from its shape
// and its neighbours. Works on strokes (polylines), so the same analysis reads what the robot
// draws (a primitive per stroke) and the centrelines of the source image's ink. Every threshold is
// in stroke-width units (sw) and every decision keeps the measured value beside its threshold.
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "eval/drawing.hpp"

namespace sv::semantic {

struct Stroke {
  std::string id;  // the primitive it draws ("" for source ink)
  Polyline points;
};

// What the robot draws, one stroke per pen-down piece, named by its primitive.
std::vector<Stroke> drawn_strokes(const Drawing& d);
// Polylines (the source ink's centrelines) as unnamed strokes.
std::vector<Stroke> plain_strokes(const std::vector<Polyline>& paths);
// What the robot draws of a scene (its command stream replayed, else its primitives).
std::vector<Stroke> scene_strokes(const Scene& s);
// The source image's size (else the extent of the primitives).
cv::Size image_size(const Scene& s);

// One measured value against its threshold: "border_fraction 0.97 >= 0.90".
struct Evidence {
  std::string measure;
  double value = 0;
  std::string op;  // ">=", "<=", "<", ">"
  double threshold = 0;
  std::string unit;  // "sw" (stroke widths), "ratio", "count", "deg"
  bool passed = false;
  std::string text() const;
  json to_json() const;
};
Evidence measured(const std::string& measure, double value, const std::string& op, double threshold,
                  const std::string& unit);
// How far a decision's measures are past their thresholds: 0.5 at a threshold, 1 when the
// margin is as large as the threshold itself (for a share above a threshold: as what is left up
// to 1); the least of its measures.
double confidence_of(const std::vector<Evidence>& evidence);

// A region enclosed by ink (a background component that does not reach the outside).
struct Hole {
  BBox box;             // image pixels
  double area_px = 0;   // image px²
  Vec2 centroid;
  cv::Rect cell;        // where `mask` sits in the raster of its Raster
  cv::Mat mask;         // CV_8U, 255 inside
};

// The raster the analysis draws strokes on: image pixels scaled by `scale`, offset so every
// stroke (however far outside the image) has paper around it.
struct Raster {
  double scale = 1;
  Vec2 origin;  // image point at raster pixel (0, 0)
  cv::Size size;
  cv::Point to_cell(Vec2 p) const;
  Vec2 to_image(double cx, double cy) const;
};

struct Form {
  int number = 0;              // 1-based, in order of size (largest first)
  std::vector<int> strokes;    // indices into the analysis' strokes
  std::vector<std::string> primitive_ids;  // sorted, unique (empty for source ink)
  BBox box;
  Vec2 centroid;               // length-weighted
  double length_px = 0;
  bool closed = false;         // bounds at least one closed region
  std::vector<Hole> holes;
  int parent = -1;             // index of the smallest form whose closed region holds it
  double inside_share = 0;     // share of its samples inside that region
  std::vector<int> children;
  std::string role = "unknown";
  double confidence = 0;
  std::vector<Evidence> evidence;
  std::string label, labelled_by;
};

struct Analysis {
  double sw = 2;               // stroke width, px
  double join_px = 3;          // strokes this close are one form
  std::vector<Stroke> strokes;
  Raster raster;
  std::vector<Form> forms;
  std::vector<Hole> holes;     // closed regions of the whole drawing (all strokes together)
  std::vector<int> form_of;    // stroke index -> form index
  BBox ink_box;
  Vec2 ink_centroid;
  double ink_length_px = 0;
  struct Row {
    std::vector<int> forms;  // left to right
    double baseline_px = 0;  // the first form's bottom, which the others' bottoms keep to
    double tolerance_px = 0; // how far they may be from it
  };
  std::vector<Row> rows;  // forms on a shared baseline (annotation)
  std::vector<std::vector<int>> textures;  // clusters of short similar marks
};

// Thresholds, in stroke widths unless named otherwise.
struct FormParams {
  double join_sw = 1.5;            // centrelines this close join (half a stroke width of paper between inks)
  double min_hole_sw2 = 1.0;       // closed regions smaller than this many sw² are ink gaps, not regions
  double inside_fraction = 0.9;    // share of a form's samples in another's closed region to be inside it
  double frame_border_fraction = 0.9;  // share of a frame's length along its bounding box
  double border_reach_sw = 1.0;    // how near the bounding box "along it" is
  int texture_min_marks = 5;
  double texture_length_ratio = 1.6;   // longest / shortest neighbouring mark
  double texture_reach = 2.0;      // neighbouring marks: centroids within this many mark lengths
  double mark_max_turn_deg = 60;   // a mark is a short stroke that hardly turns
  int baseline_min_forms = 3;
  double baseline_sw = 1.0;        // bottoms within this of the row's baseline (or 0.2 of the height)
  double baseline_gap_heights = 1.5;   // gaps between neighbours at most this many letter heights
  double decoration_length_share = 0.05;  // of all the ink
  double decoration_size_share = 0.12;    // bounding-box diagonal, of the drawing's
};

// The raster covering the image (`image`, its size) and every stroke of each set, with paper
// around: two analyses on one raster compare their closed regions pixel by pixel.
Raster raster_for(const std::vector<const std::vector<Stroke>*>& sets, cv::Size image, double stroke_width_px);

// Splits strokes into forms with their closed regions, containment tree and roles.
Analysis analyze_forms(std::vector<Stroke> strokes, double stroke_width_px, const Raster& raster,
                       const FormParams& params = {});

// The forms of what the robot draws of a scene.
Analysis scene_forms(const Scene& s, const FormParams& params = {});

// The name a form is given: the oracle's when one is wired in; from geometry, an honest placeholder
// ("form 3: closed, contains 2 forms") with labelled_by "geometry".
void label_forms(Analysis& a);

// The role of each primitive: its form's, except strokes that alone hold a form together between
// two larger parts (connectors). Sorted by primitive id; ids absent from the forms are left out.
struct PrimitiveRole {
  std::string id, role;
  int form = 0;  // form number
  double confidence = 0;
  std::vector<Evidence> evidence;
};
std::vector<PrimitiveRole> primitive_roles(const Analysis& a);

// Samples of strokes every `step` px (both ends included), for measures along the ink.
Polyline resample(const Polyline& pl, double step);
double bbox_diagonal(const BBox& b);
// Intersection over union of two closed regions (same raster).
double hole_iou(const Hole& a, const Hole& b);

}  // namespace sv::semantic
