#include "raster/ink.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "core/error.hpp"

namespace sv {
namespace {

using Histogram = std::array<double, 256>;

// Fewer gray levels than this between the paper and ink classes means there is no drawing.
constexpr double kMinContrast = 24;
// The ink level is this quantile of the normalised ink class: dark enough to be full ink,
// robust to noise and to the partial coverage of thin strokes.
constexpr double kInkQuantile = 0.10;
// Levels and thresholds come from histograms of every kSample-th pixel of every
// kSample-th row: plenty of samples, a quarter of the work.
constexpr int kSample = 2;

Histogram sampled_histogram(const cv::Mat& img) {
  Histogram h{};
  for (int y = 0; y < img.rows; y += kSample) {
    const uchar* g = img.ptr<uchar>(y);
    for (int x = 0; x < img.cols; x += kSample) h[g[x]] += 1;
  }
  return h;
}

double quantile(const Histogram& h, double q, int from = 0, int to = 255) {
  double total = 0;
  for (int v = from; v <= to; ++v) total += h[v];
  double acc = 0;
  for (int v = from; v <= to; ++v) {
    acc += h[v];
    if (acc >= q * total && acc > 0) return v;
  }
  return to;
}

struct OtsuSplit {
  int threshold = 0;  // dark class: gray <= threshold
  double dark_mean = 0, bright_mean = 0, dark_count = 0;
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
    if (var > best_var) best_var = var, best = {t, m0, m1, n0};
  }
  return best;
}

// The paper level of every pixel, interpolated bilinearly between cell centres one row at a
// time, so no full-size map is ever stored.
class PaperLevels {
 public:
  PaperLevels(cv::Mat cells, int cell, int width) : cells_(std::move(cells)), cell_(cell), x0_(width), fx_(width), row_(width), mix_(cells_.cols) {
    for (int x = 0; x < width; ++x) split(x, cells_.cols, x0_[x], fx_[x]);
  }
  // Levels (1..255) of the pixels of row y.
  const std::vector<uchar>& row(int y) {
    int y0;
    float fy;
    split(y, cells_.rows, y0, fy);
    const float *a = cells_.ptr<float>(y0), *b = cells_.ptr<float>(std::min(y0 + 1, cells_.rows - 1));
    for (int c = 0; c < cells_.cols; ++c) mix_[c] = a[c] + (b[c] - a[c]) * fy;
    for (size_t x = 0; x < row_.size(); ++x) {
      int c = x0_[x];
      float v = mix_[c] + (mix_[std::min(c + 1, cells_.cols - 1)] - mix_[c]) * fx_[x];
      row_[x] = static_cast<uchar>(std::clamp(v + 0.5f, 1.0f, 255.0f));
    }
    return row_;
  }

 private:
  // Cell to the left of (or above) pixel i's centre and the weight of the next one.
  void split(int i, int cells, int& c0, float& f) const {
    float u = (i + 0.5f) / cell_ - 0.5f;
    c0 = std::clamp(static_cast<int>(std::floor(u)), 0, cells - 1);
    f = std::clamp(u - c0, 0.0f, 1.0f);
  }
  cv::Mat cells_;
  int cell_;
  std::vector<int> x0_;
  std::vector<float> fx_;
  std::vector<uchar> row_;
  std::vector<float> mix_;
};

// Paper level per cell (CV_32F): the mean of the paper pixels (gray above paper_cut) of each
// cell, cells without paper filled by normalised convolution.
cv::Mat paper_cells(const cv::Mat& gray, int paper_cut, int cell, double fallback) {
  const int sw = (gray.cols + cell - 1) / cell, sh = (gray.rows + cell - 1) / cell;
  std::vector<int64_t> isum(static_cast<size_t>(sw) * sh, 0), icount(isum.size(), 0);
  std::vector<int> column_cell(gray.cols);
  for (int x = 0; x < gray.cols; ++x) column_cell[x] = x / cell;
  for (int y = 0; y < gray.rows; ++y) {
    const uchar* g = gray.ptr<uchar>(y);
    int64_t* s = isum.data() + static_cast<size_t>(y / cell) * sw;
    int64_t* c = icount.data() + static_cast<size_t>(y / cell) * sw;
    for (int x = 0; x < gray.cols; ++x)
      if (g[x] > paper_cut) s[column_cell[x]] += g[x], c[column_cell[x]] += 1;
  }
  cv::Mat sum(sh, sw, CV_32F), count(sh, sw, CV_32F);
  for (int y = 0; y < sh; ++y)
    for (int x = 0; x < sw; ++x)
      sum.at<float>(y, x) = static_cast<float>(isum[y * sw + x]), count.at<float>(y, x) = static_cast<float>(icount[y * sw + x]);
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
  return level;
}

// Gray relative to the paper level, 255 = paper, for every (paper, gray) pair.
std::vector<uchar> normalising_table() {
  std::vector<uchar> t(256 * 256);
  for (int p = 0; p < 256; ++p)
    for (int g = 0; g < 256; ++g) t[p * 256 + g] = static_cast<uchar>(std::min(255, (510 * g + std::max(p, 1)) / (2 * std::max(p, 1))));
  return t;
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
  Histogram h = sampled_histogram(gray);
  OtsuSplit split = otsu(h);
  if (split.dark_count == 0 || split.bright_mean - split.dark_mean < kMinContrast) return uniform_ink(gray, h);

  Ink ink;
  // Confident paper lies above the midpoint of the Otsu threshold and the paper class mean:
  // anti-aliased fringes of strokes fall below it.
  const int paper_cut = static_cast<int>((split.threshold + split.bright_mean) / 2);
  ink.paper_level = quantile(h, 0.5, paper_cut + 1, 255);
  const int cell = std::max(4, static_cast<int>(std::lround(opt.background_cell_px)));
  PaperLevels paper(paper_cells(gray, paper_cut, cell, ink.paper_level), cell, gray.cols);

  static const std::vector<uchar> normal = normalising_table();
  Histogram nh{};
  for (int y = 0; y < gray.rows; y += kSample) {
    const uchar* g = gray.ptr<uchar>(y);
    const std::vector<uchar>& p = paper.row(y);
    for (int x = 0; x < gray.cols; x += kSample) nh[normal[p[x] * 256 + g[x]]] += 1;
  }
  const int ink_cut = otsu(nh).threshold;
  ink.ink_level = quantile(nh, kInkQuantile, 0, ink_cut);
  ink.threshold = opt.threshold ? *opt.threshold : (255.0 + ink.ink_level) / 2;

  // Coverage and binary for every normalised gray, then for every pixel.
  const double span = std::max(1.0, 255.0 - ink.ink_level);
  std::array<uchar, 256> cov{}, bin{};
  for (int n = 0; n < 256; ++n) {
    cov[n] = cv::saturate_cast<uchar>(255.0 * (255.0 - n) / span);
    bin[n] = n < ink.threshold ? 1 : 0;
  }
  ink.coverage.create(gray.size(), CV_8U);
  ink.binary.create(gray.size(), CV_8U);
  for (int y = 0; y < gray.rows; ++y) {
    const uchar* g = gray.ptr<uchar>(y);
    const std::vector<uchar>& p = paper.row(y);
    uchar *c = ink.coverage.ptr<uchar>(y), *b = ink.binary.ptr<uchar>(y);
    for (int x = 0; x < gray.cols; ++x) {
      uchar n = normal[p[x] * 256 + g[x]];
      c[x] = cov[n];
      b[x] = bin[n];
    }
  }
  return ink;
}

}  // namespace sv
