#include "raster/ink.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"

namespace sv {
namespace {

using Histogram = std::array<double, 256>;

// Fewer gray levels than this between the paper and ink classes means there is no drawing.
constexpr double kMinContrast = 24;
// The ink level is this quantile of the normalised ink class: dark enough to be full ink,
// robust to noise and to the partial coverage of thin strokes.
constexpr double kInkQuantile = 0.10;

Histogram histogram(const cv::Mat& img, const cv::Mat& mask = {}) {
  Histogram h{};
  for (int y = 0; y < img.rows; ++y) {
    const uchar* g = img.ptr<uchar>(y);
    const uchar* m = mask.empty() ? nullptr : mask.ptr<uchar>(y);
    for (int x = 0; x < img.cols; ++x)
      if (!m || m[x]) h[g[x]] += 1;
  }
  return h;
}

double quantile(const Histogram& h, double q) {
  double total = 0;
  for (double c : h) total += c;
  double acc = 0;
  for (int v = 0; v < 256; ++v) {
    acc += h[v];
    if (acc >= q * total && acc > 0) return v;
  }
  return 255;
}

struct OtsuSplit {
  int threshold = 0;  // dark class: gray <= threshold
  double dark_mean = 0, bright_mean = 0, dark_count = 0, bright_count = 0;
};

// Otsu's method: the split maximising the between-class variance.
OtsuSplit otsu(const Histogram& h) {
  double total = 0, sum = 0;
  for (int v = 0; v < 256; ++v) total += h[v], sum += v * h[v];
  OtsuSplit best;
  double best_var = -1, n0 = 0, s0 = 0;
  for (int t = 0; t < 255; ++t) {
    n0 += h[t];
    s0 += t * h[t];
    double n1 = total - n0;
    if (n0 == 0 || n1 == 0) continue;
    double m0 = s0 / n0, m1 = (sum - s0) / n1;
    double var = n0 * n1 * (m1 - m0) * (m1 - m0);
    if (var > best_var) best_var = var, best = {t, m0, m1, n0, n1};
  }
  return best;
}

// Paper level per pixel (CV_8UC1) from the gray values under `paper` (CV_8UC1 0/1): cell means,
// holes filled by normalised convolution, bilinear interpolation back to full size.
cv::Mat paper_map(const cv::Mat& gray, const cv::Mat& paper, int cell, double fallback) {
  int sw = (gray.cols + cell - 1) / cell, sh = (gray.rows + cell - 1) / cell;
  cv::Mat sum = cv::Mat::zeros(sh, sw, CV_32F), count = cv::Mat::zeros(sh, sw, CV_32F);
  for (int y = 0; y < gray.rows; ++y) {
    const uchar* g = gray.ptr<uchar>(y);
    const uchar* m = paper.ptr<uchar>(y);
    float* s = sum.ptr<float>(y / cell);
    float* c = count.ptr<float>(y / cell);
    for (int x = 0; x < gray.cols; ++x)
      if (m[x]) s[x / cell] += g[x], c[x / cell] += 1;
  }
  cv::Mat level(sh, sw, CV_32F, cv::Scalar(-1));
  const double min_weight = 0.05 * cell * cell;  // a few paper pixels suffice
  for (double sigma : {1.0, 4.0}) {  // cells; the wider pass reaches into large ink areas
    cv::Mat bs, bc;
    cv::GaussianBlur(sum, bs, cv::Size(), sigma, sigma, cv::BORDER_REPLICATE);
    cv::GaussianBlur(count, bc, cv::Size(), sigma, sigma, cv::BORDER_REPLICATE);
    for (int y = 0; y < sh; ++y)
      for (int x = 0; x < sw; ++x) {
        float& l = level.at<float>(y, x);
        if (l < 0 && bc.at<float>(y, x) >= min_weight) l = bs.at<float>(y, x) / bc.at<float>(y, x);
      }
  }
  level.setTo(fallback, level < 0);
  cv::Mat full;
  cv::resize(level, full, gray.size(), 0, 0, cv::INTER_LINEAR);
  full.convertTo(full, CV_8U);
  cv::max(full, 1, full);
  return full;
}

// Gray relative to the local paper level, 255 = paper.
cv::Mat normalise(const cv::Mat& gray, const cv::Mat& paper_level) {
  std::vector<uchar> lut(256 * 256);
  for (int p = 0; p < 256; ++p)
    for (int g = 0; g < 256; ++g)
      lut[p * 256 + g] = static_cast<uchar>(std::min(255L, std::lround(255.0 * g / std::max(p, 1))));
  cv::Mat out(gray.size(), CV_8U);
  for (int y = 0; y < gray.rows; ++y) {
    const uchar* g = gray.ptr<uchar>(y);
    const uchar* p = paper_level.ptr<uchar>(y);
    uchar* o = out.ptr<uchar>(y);
    for (int x = 0; x < gray.cols; ++x) o[x] = lut[p[x] * 256 + g[x]];
  }
  return out;
}

// Confident paper: above the threshold and at least two pixels from anything darker.
cv::Mat confident_paper(const cv::Mat& img, double threshold) {
  cv::Mat paper = img > threshold, eroded;
  cv::erode(paper, eroded, cv::getStructuringElement(cv::MORPH_RECT, {5, 5}));
  if (cv::countNonZero(eroded) > 0) paper = eroded;
  return paper / 255;
}

Ink uniform_ink(const cv::Mat& gray, const Histogram& h) {
  Ink ink;
  ink.uniform = true;
  double median = quantile(h, 0.5);
  bool dark = median < 128;
  ink.paper_level = dark ? 255 : median;
  ink.ink_level = dark ? median : 0;
  ink.threshold = 128;
  ink.binary = cv::Mat(gray.size(), CV_8U, cv::Scalar(dark ? 1 : 0));
  ink.coverage = cv::Mat(gray.size(), CV_8U, cv::Scalar(dark ? 255 : 0));
  return ink;
}

}  // namespace

Ink separate_ink(const cv::Mat& gray, const InkOptions& opt) {
  if (gray.empty() || gray.type() != CV_8UC1) throw Error(Code::internal, "separate_ink needs a CV_8UC1 image");
  Histogram h = histogram(gray);
  OtsuSplit split = otsu(h);
  if (split.dark_count == 0 || split.bright_mean - split.dark_mean < kMinContrast) return uniform_ink(gray, h);

  Ink ink;
  int cell = std::max(4, static_cast<int>(std::lround(opt.background_cell_px)));
  cv::Mat paper = confident_paper(gray, split.threshold);
  ink.paper_level = quantile(histogram(gray, paper), 0.5);
  // Two passes: the second takes its paper from the normalised image, so paper darker than
  // the global threshold (shadows, gradients) is recognised as paper.
  cv::Mat normal = normalise(gray, paper_map(gray, paper, cell, ink.paper_level));
  OtsuSplit nsplit = otsu(histogram(normal));
  normal = normalise(gray, paper_map(gray, confident_paper(normal, nsplit.threshold), cell, ink.paper_level));

  nsplit = otsu(histogram(normal));
  ink.ink_level = quantile(histogram(normal, normal <= nsplit.threshold), kInkQuantile);
  ink.threshold = opt.threshold ? *opt.threshold : (255.0 + ink.ink_level) / 2;

  double span = std::max(1.0, 255.0 - ink.ink_level);
  cv::Mat lut_cov(1, 256, CV_8U), lut_bin(1, 256, CV_8U);
  for (int n = 0; n < 256; ++n) {
    lut_cov.at<uchar>(n) = cv::saturate_cast<uchar>(255.0 * (255.0 - n) / span);
    lut_bin.at<uchar>(n) = n < ink.threshold ? 1 : 0;
  }
  cv::LUT(normal, lut_cov, ink.coverage);
  cv::LUT(normal, lut_bin, ink.binary);
  return ink;
}

}  // namespace sv
