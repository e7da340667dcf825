// Synthetic line drawings for the raster and graph tests: strokes drawn with cv::line and
// cv::circle at 8x resolution and averaged down (anti-aliasing by supersampling), so that
// coverage at the edges is exact to 1/64 and centrelines are known to a fraction of a pixel.
#pragma once
#include <opencv2/imgproc.hpp>

#include "core/geometry.hpp"
#include "graph/skeletonize.hpp"

namespace sv::test {

class Sketch {
 public:
  static constexpr int kScale = 8;
  static constexpr int kShift = 4;  // fractional bits of the drawing coordinates

  Sketch(int width, int height, uchar paper = 255, uchar ink = 0)
      : big_(height * kScale, width * kScale, CV_8U, cv::Scalar(paper)), ink_(ink) {}

  // A stroke of the given width with round caps, from a to b (pixel-centre coordinates).
  Sketch& line(Vec2 a, Vec2 b, double width) {
    cv::line(big_, at(a), at(b), cv::Scalar(ink_), thickness(width), cv::LINE_8, kShift);
    return *this;
  }
  Sketch& circle(Vec2 c, double r, double width) {
    cv::circle(big_, at(c), static_cast<int>(std::lround(r * kScale * (1 << kShift))), cv::Scalar(ink_),
               thickness(width), cv::LINE_8, kShift);
    return *this;
  }
  // The arc of the circle (c, r) from angle a0 to a1 (degrees, y down).
  Sketch& arc(Vec2 c, double r, double a0, double a1, double width) {
    int radius = static_cast<int>(std::lround(r * kScale * (1 << kShift)));
    cv::ellipse(big_, at(c), {radius, radius}, 0, a0, a1, cv::Scalar(ink_), thickness(width), cv::LINE_8, kShift);
    return *this;
  }
  Sketch& polyline(const std::vector<Vec2>& pts, bool closed, double width) {
    std::vector<cv::Point> p;
    for (Vec2 q : pts) p.push_back(at(q));
    cv::polylines(big_, p, closed, cv::Scalar(ink_), thickness(width), cv::LINE_8, kShift);
    for (Vec2 q : pts) dot(q, width);  // round joins
    return *this;
  }
  Sketch& dot(Vec2 c, double diameter) {
    cv::circle(big_, at(c), static_cast<int>(std::lround(diameter / 2 * kScale * (1 << kShift))), cv::Scalar(ink_),
               cv::FILLED, cv::LINE_8, kShift);
    return *this;
  }

  cv::Mat image() const {
    cv::Mat small;
    cv::resize(big_, small, {}, 1.0 / kScale, 1.0 / kScale, cv::INTER_AREA);
    return small;
  }

 private:
  // Pixel (x, y) of the image covers big pixels 8x .. 8x+7, whose centres average to 8x+3.5.
  static cv::Point at(Vec2 p) {
    return {static_cast<int>(std::lround((p.x * kScale + 3.5) * (1 << kShift))),
            static_cast<int>(std::lround((p.y * kScale + 3.5) * (1 << kShift)))};
  }
  static int thickness(double width) { return static_cast<int>(std::lround(width * kScale)); }

  cv::Mat big_;
  uchar ink_;
};

// The scene sv-skeleton makes of a drawing.
inline Scene skeleton_of(const cv::Mat& gray, const SkeletonOptions& opt = {}) {
  Scene s;
  skeletonize(s, gray, opt);
  return s;
}

}  // namespace sv::test
