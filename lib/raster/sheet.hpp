// The sheet of paper in a photo. A phone photo of a drawing often shows the desk or the floor
// around the sheet; traced as ink, the sheet's edges become a frame of strokes the robot would
// draw. With strokes closed away on a small copy, the sheet is the largest region of the light
// class (Otsu). The image is flooded (watershed) from the sheet's inside and from each run of
// border pixels darker than the sheet; the floods meet along the steepest edges, and across a
// stretch of the sheet's edge lost in a shadow as dark as the desk. A run's part is off the
// sheet when most of where it meets the sheet is a sharp edge: a sheet's edge falls within a few
// pixels, light falling off and soft shadows over a tenth of the page or more.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

struct SheetOptions {
  double stroke_scale = 1.0 / 32;  // strokes narrower than this fraction of the shorter side are closed away
  // Off the sheet is darker than it by this share, and its edge falls by as much within a few
  // pixels (0: no sheet is looked for).
  double min_step = 0.15;
};

// Pixels off the sheet (CV_8U, 1 off, 0 on), with a margin over the sheet's blurred edge; an
// empty Mat when the whole image is the sheet.
cv::Mat off_sheet(const cv::Mat& gray, const SheetOptions& opt = {});

}  // namespace sv
