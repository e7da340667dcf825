// The sheet of paper in a photo. A phone photo of a drawing often shows the desk or the floor
// around the sheet; traced as ink, the sheet's edges become a frame of strokes the robot would
// draw. With strokes closed away on a small copy, each side of the sheet is a straight line (a
// Hough vote over lines near the image's side) along which the level steps down sharply towards
// the image's side, with darker surroundings beyond it. Shadows and light falling off have soft
// or curved edges; a desk's grain and the page's shadow on it lie beyond the innermost line.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

struct SheetOptions {
  double stroke_scale = 1.0 / 32;  // strokes narrower than this fraction of the shorter side are closed away
  // The sheet's edge falls by this share within a few pixels, and what lies beyond is darker than
  // the sheet by as much (0: no sheet is looked for).
  double min_step = 0.10;
};

// Pixels off the sheet (CV_8U, 1 off, 0 on), with a margin over the sheet's blurred edge; an
// empty Mat when the whole image is the sheet.
cv::Mat off_sheet(const cv::Mat& gray, const SheetOptions& opt = {});

}  // namespace sv
