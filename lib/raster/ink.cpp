#include "raster/ink.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "core/error.hpp"
#include "raster/box.hpp"
#include "raster/sheet.hpp"

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

// Counts pixels per gray level. Paper repeats one level over long runs, and a count that waits
// for the previous one of the same level is slow: four partial counts take turns.
class LevelCount {
 public:
  void add(uchar v) { counts_[turn_++ & 3][v] += 1; }
  Histogram histogram() const {
    Histogram h{};
    for (const auto& c : counts_)
      for (int v = 0; v < 256; ++v) h[v] += c[v];
    return h;
  }

 private:
  std::array<std::array<uint32_t, 256>, 4> counts_{};
  unsigned turn_ = 0;
};

Histogram sampled_histogram(const cv::Mat& img) {
  LevelCount h;
  for (int y = 0; y < img.rows; y += kSample) {
    const uchar* g = img.ptr<uchar>(y);
    for (int x = 0; x < img.cols; x += kSample) h.add(g[x]);
  }
  return h.histogram();
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
  PaperLevels(cv::Mat cells, int cell, int width) : cells_(std::move(cells)), cell_(cell), fx_(width), row_(width), mix_(cells_.cols) {
    for (int x = 0; x < width; ++x) {
      int c;
      split(x, cells_.cols, c, fx_[x]);
      if (runs_.empty() || runs_.back().cell != c) runs_.push_back({c, x, x});
      runs_.back().end = x + 1;
    }
  }
  // Levels (1..255) of the pixels of row y.
  const std::vector<uchar>& row(int y) {
    int y0;
    float fy;
    split(y, cells_.rows, y0, fy);
    const float *a = cells_.ptr<float>(y0), *b = cells_.ptr<float>(std::min(y0 + 1, cells_.rows - 1));
    for (int c = 0; c < cells_.cols; ++c) mix_[c] = a[c] + (b[c] - a[c]) * fy;
    // One run of pixels per cell: within it the two levels mixed are the same, so the inner
    // loop is a multiply-add over contiguous weights (through local pointers: a uchar store may
    // alias the members).
    const float* weight = fx_.data();
    uchar* out = row_.data();
    for (const Run& run : runs_) {
      const float m = mix_[run.cell], d = mix_[std::min(run.cell + 1, cells_.cols - 1)] - m;
      for (int x = run.begin, end = run.end; x < end; ++x)
        out[x] = static_cast<uchar>(std::clamp(m + d * weight[x] + 0.5f, 1.0f, 255.0f));
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
  struct Run {
    int cell, begin, end;  // the pixels [begin, end) mix cell with the next one
  };
  std::vector<Run> runs_;
  std::vector<float> fx_;
  std::vector<uchar> row_;
  std::vector<float> mix_;
};

// Paper level per cell (CV_32F): the mean of the paper pixels (paper != 0) of each cell,
// cells without paper filled by normalised convolution.
cv::Mat paper_cells(const cv::Mat& gray, const cv::Mat& paper, int cell, double fallback) {
  const int sw = (gray.cols + cell - 1) / cell, sh = (gray.rows + cell - 1) / cell;
  std::vector<int64_t> isum(static_cast<size_t>(sw) * sh, 0), icount(isum.size(), 0);
  for (int y = 0; y < gray.rows; ++y) {
    const uchar *g = gray.ptr<uchar>(y), *m = paper.ptr<uchar>(y);
    int64_t* s = isum.data() + static_cast<size_t>(y / cell) * sw;
    int64_t* c = icount.data() + static_cast<size_t>(y / cell) * sw;
    for (int cx = 0, x0 = 0; cx < sw; ++cx, x0 += cell) {
      int sum = 0, count = 0;
      for (int x = x0, x1 = std::min(x0 + cell, gray.cols); x < x1; ++x) {
        int on = m[x] != 0;
        sum += on * g[x], count += on;
      }
      s[cx] += sum, c[cx] += count;
    }
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

// The upper envelope of the gray: a morphological closing (which removes every dark
// structure narrower than 2r + 1 coarse pixels and keeps smooth light and shadow) of the
// coarse image, brought back to the size of `gray`.
cv::Mat light_envelope(const cv::Mat& gray, const cv::Mat& coarse, int r) {
  cv::Mat closed, full;
  cv::morphologyEx(coarse, closed, cv::MORPH_CLOSE, cv::getStructuringElement(cv::MORPH_RECT, {2 * r + 1, 2 * r + 1}));
  cv::resize(closed, full, gray.size(), 0, 0, cv::INTER_LINEAR);
  return full;
}

// Pixels that are surely paper: not darker than the light envelope at stroke scale by more
// than `small` (thin strokes, and the anti-aliased fringe one pixel around them), nor than
// the envelope at page scale by more than `large` (ink areas too wide for the stroke-scale
// envelope, such as brush strokes; shadows are shallower than this).
cv::Mat sure_paper(const cv::Mat& gray, const InkOptions& opt) {
  const int side = std::min(gray.cols, gray.rows);
  const int f = std::max(1, static_cast<int>(std::lround(side / 256.0)));
  // Averaged over 5x5 pixels, sensor noise and paper grain are a fifth of their size, well
  // below the contrasts that matter here, and the envelope does not ride on their peaks.
  cv::Mat smooth, coarse;
  cv::blur(gray, smooth, {5, 5}, {-1, -1}, cv::BORDER_REPLICATE);
  if (f > 1) cv::resize(smooth, coarse, {(gray.cols + f - 1) / f, (gray.rows + f - 1) / f}, 0, 0, cv::INTER_AREA);
  else coarse = smooth;
  auto radius = [&](double fraction) { return std::max(2, static_cast<int>(std::lround(fraction * side / f))); };
  cv::Mat near = light_envelope(gray, coarse, radius(opt.stroke_scale)),
          far = light_envelope(gray, coarse, radius(opt.page_scale));
  cv::Mat paper(gray.size(), CV_8U);
  // 255 * (1 - g / envelope) <= 255 * contrast, in integers: (255 - 255 contrast) envelope <=
  // 255 g. With the contrasts fractions (the parameters' limits), both sides fit 16 bits,
  // whose products SSE2 computes eight at a time (32-bit ones it does not multiply at all).
  auto least_share = [](double contrast) {  // of the envelope, in 255ths, that is paper
    return static_cast<uint16_t>(255 - std::clamp(static_cast<int>(std::lround(255 * contrast)), 0, 255));
  };
  const uint16_t small = least_share(opt.paper_contrast), large = least_share(opt.page_contrast);
  for (int y = 0; y < gray.rows; ++y) {
    const uchar *g = smooth.ptr<uchar>(y), *a = near.ptr<uchar>(y), *b = far.ptr<uchar>(y);
    uchar* p = paper.ptr<uchar>(y);
    // `&`, not `&&`, and the width in a local (a uchar store may alias gray.cols): the loop
    // vectorises.
    for (int x = 0, w = gray.cols; x < w; ++x) {
      const uint16_t lit = static_cast<uint16_t>(255 * g[x]);
      p[x] = (static_cast<uint16_t>(small * a[x]) <= lit) & (static_cast<uint16_t>(large * b[x]) <= lit);
    }
  }
  cv::erode(paper, paper, cv::Mat(), {-1, -1}, 1);  // and not in the blurred fringe of ink
  return paper;
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

// The darkness of every pixel relative to its paper level, 0 on paper, 255 - normalised
// gray elsewhere, and the histograms of the normalised gray of all pixels and of the paper.
// Off the sheet (`off`, when not empty) the darkness is 0 and no pixel is counted.
cv::Mat darkness(const cv::Mat& gray, const cv::Mat& paper_mask, const cv::Mat& off, PaperLevels& paper,
                 Histogram& all_hist, Histogram& paper_hist) {
  static const std::vector<uchar> normal = normalising_table();
  cv::Mat dark(gray.size(), CV_8U);
  LevelCount all, on_paper;
  for (int y = 0; y < gray.rows; ++y) {
    const uchar *g = gray.ptr<uchar>(y), *m = paper_mask.ptr<uchar>(y);
    // Pointers in locals: a byte store may alias anything, and would make the loop reload them.
    const uchar *p = paper.row(y).data(), *table = normal.data();
    uchar* d = dark.ptr<uchar>(y);
    for (int x = 0, w = gray.cols; x < w; ++x) d[x] = 255 - table[p[x] * 256 + g[x]];
    const uchar* o = off.empty() ? nullptr : off.ptr<uchar>(y);
    if (o)
      for (int x = 0, w = gray.cols; x < w; ++x) d[x] &= static_cast<uchar>(o[x] - 1);  // o is 0/1
    if (y % kSample != 0) continue;
    for (int x = 0; x < gray.cols; x += kSample) {
      if (o && o[x]) continue;
      const uchar n = 255 - d[x];
      all.add(n);
      if (m[x]) on_paper.add(n);
    }
  }
  all_hist = all.histogram();
  paper_hist = on_paper.histogram();
  return dark;
}

// Spread of the paper's normalised gray, from its darker half (the brighter half is clipped
// at 255): the distance from the median down to the 16th percentile, one standard deviation
// for Gaussian noise.
double paper_noise(const Histogram& h) { return quantile(h, 0.5) - quantile(h, 0.1587); }

// A rough stroke width of a binary image: twice the median distance to paper at the
// ridge pixels (local maxima of the distance transform).
double ridge_width(const cv::Mat& binary) {
  // Only the ink's bounding box and a frame of one pixel are transformed: a path from inside
  // to farther paper crosses the frame, which is paper (or the image's edge, beyond which the
  // transform sees none), so the distances inside are the whole image's.
  const cv::Rect ink = cv::boundingRect(binary);
  if (ink.empty()) return 1;
  const cv::Rect crop = grown_within(ink, 1, binary.size());
  cv::Mat dist;
  cv::distanceTransform(binary(crop), dist, cv::DIST_L2, cv::DIST_MASK_3);
  std::vector<float> ridge;
  for (int y = 1; y + 1 < dist.rows; ++y) {
    const float *a = dist.ptr<float>(y - 1), *b = dist.ptr<float>(y), *c = dist.ptr<float>(y + 1);
    for (int x = 1; x + 1 < dist.cols; ++x) {
      float v = b[x];
      if (v > 0 && v >= b[x - 1] && v >= b[x + 1] && v >= a[x] && v >= c[x] && v >= a[x - 1] && v >= a[x + 1] &&
          v >= c[x - 1] && v >= c[x + 1])
        ridge.push_back(v);
    }
  }
  if (ridge.empty()) return 1;
  auto mid = ridge.begin() + ridge.size() / 2;
  std::nth_element(ridge.begin(), mid, ridge.end());
  return 2 * *mid;
}

// Canny's hysteresis: the 8-connected regions darker than `weak`, ink (a 0/1 mask) where they
// reach `strong` somewhere. A small mark drawn lightly (the dot of an i, a full stop) reaches
// no strong ink, but stands out from the paper as grain and noise do not; add_light_marks
// makes ink of those once the strokes' width, read off the strong regions, is known.
class Regions {
 public:
  Regions(const cv::Mat& dark, double weak, double strong) : mask_(dark > weak) {
    // Every region lies within the bounding box of them all: only that box is labelled.
    const cv::Rect box = cv::boundingRect(mask_);
    if (box.empty()) return;
    cv::Mat labels;
    const int n = cv::connectedComponents(mask_(box), labels, 8, CV_32S);
    std::vector<uchar> peak(n, 0);
    for (int y = 0; y < box.height; ++y) {
      const uchar* d = dark.ptr<uchar>(box.y + y) + box.x;
      const int* l = labels.ptr<int>(y);
      for (int x = 0; x < box.width; ++x) peak[l[x]] = std::max(peak[l[x]], d[x]);
    }
    std::vector<uchar> keep(n, 0);
    std::vector<int> mark_of(n, -1);
    for (int i = 1; i < n; ++i) {
      keep[i] = peak[i] >= strong;
      if (!keep[i] && peak[i] >= kMarkPeak * weak) mark_of[i] = static_cast<int>(marks_.size()), marks_.push_back({});
    }
    if (std::count(keep.begin() + 1, keep.end(), 1) == n - 1) {  // every region is ink
      mask_ &= 1;
      return;
    }
    // Beyond the box the mask is already paper; inside, every pixel is written. Each mark's
    // extent is measured on the way and its pixels kept, so the labels are freed here.
    std::vector<std::array<int, 4>> ends(marks_.size(), {INT_MAX, INT_MAX, -1, -1});
    for (int y = 0; y < box.height; ++y) {
      uchar* m = mask_.ptr<uchar>(box.y + y) + box.x;
      const int* l = labels.ptr<int>(y);
      for (int x = 0; x < box.width; ++x) {
        m[x] = keep[l[x]];
        if (const int k = mark_of[l[x]]; k >= 0) {
          auto& e = ends[k];
          e[0] = std::min(e[0], x), e[1] = std::min(e[1], y), e[2] = std::max(e[2], x), e[3] = std::max(e[3], y);
          marks_[k].area += 1;
        }
      }
    }
    for (int i = 1; i < n; ++i)
      if (const int k = mark_of[i]; k >= 0) {
        const cv::Rect r(ends[k][0], ends[k][1], ends[k][2] - ends[k][0] + 1, ends[k][3] - ends[k][1] + 1);
        marks_[k].box = r + box.tl();
        marks_[k].pixels = labels(r) == i;
      }
  }

  const cv::Mat& ink() const { return mask_; }

  // Light regions no larger across than kMarkSpan stroke widths and covering at least
  // kMarkArea square widths: a dot, a tap of the pencil about as wide as its strokes, where
  // grain is a fraction of that. Not within a stroke width of the desk (`off`, when not empty,
  // is off the sheet), where the page's edge leaves such slivers.
  void add_light_marks(double width, const cv::Mat& off) {
    const int margin = static_cast<int>(std::ceil(width));
    for (const Mark& m : marks_) {
      if (std::max(m.box.width, m.box.height) > kMarkSpan * width || m.area < kMarkArea * width * width) continue;
      if (!off.empty() && cv::countNonZero(off(grown_within(m.box, margin, mask_.size()))) > 0) continue;
      mask_(m.box).setTo(1, m.pixels);
    }
  }

 private:
  static constexpr double kMarkPeak = 2, kMarkSpan = 2.5, kMarkArea = 1;
  struct Mark {
    cv::Rect box;   // in the image
    int area = 0;   // pixels
    cv::Mat pixels;  // of the box, 255 on the mark
  };
  cv::Mat mask_;
  std::vector<Mark> marks_;
};

// A Gaussian of the given sigma, nearly: three box filters, whose cost does not grow with the
// width (a 12-megapixel photo is smoothed at 8 px in the time of 1 px).
void smooth(cv::Mat& img, double sigma) {
  // Three boxes of odd width a have variance 3 (a^2 - 1) / 12.
  const int a = std::max(3, 2 * static_cast<int>(std::lround((std::sqrt(4 * sigma * sigma + 1) - 1) / 2)) + 1);
  for (int i = 0; i < 3; ++i) cv::blur(img, img, {a, a}, {-1, -1}, cv::BORDER_REPLICATE);
}

// Coverage and binary (see separate_ink, stage 4) of `dark` within the hysteresis regions.
void read_coverage(Ink& ink, const cv::Mat& dark, const cv::Mat& regions, int r, double full) {
  const int floor_dark = static_cast<int>(std::ceil(255.0 - ink.weak_threshold));
  // The stroke's own darkness for every peak value; a pixel is ink where it is darker than
  // half of it. Off the hysteresis regions only the faint fringe of strokes is left: read
  // against full ink, as a partial coverage below one half. Both are tables over (peak,
  // darkness): two lookups a pixel, where a 12-megapixel photo would divide 12 million times.
  // A peak's row of the tables is made when a pixel first needs it: a drawing has a few dozen
  // peak values, and the 65,536 divisions of the whole table cost more than the pixels' lookups.
  std::vector<uchar> on(256 * 256), on_binary(256 * 256);
  std::array<bool, 256> made{};
  auto make_row = [&](int p) {
    const double own = std::clamp<double>(p, std::max(1, floor_dark), full);
    for (int d = 0; d < 256; ++d) {
      on[p * 256 + d] = cv::saturate_cast<uchar>(255.0 * d / own);
      on_binary[p * 256 + d] = 2.0 * d > own;
    }
    made[p] = true;
  };
  std::array<uchar, 256> off{};
  for (int d = 0; d < 256; ++d) off[d] = std::min<int>(cv::saturate_cast<uchar>(255.0 * d / full), 127);
  ink.coverage.create(dark.size(), CV_8U);
  ink.binary = cv::Mat::zeros(dark.size(), CV_8U);
  for (int y = 0; y < dark.rows; ++y) {
    const uchar* d = dark.ptr<uchar>(y);
    uchar* c = ink.coverage.ptr<uchar>(y);
    for (int x = 0, w = dark.cols; x < w; ++x) c[x] = off[d[x]];
  }
  // The peak is needed inside the regions only: the dilation covers their bounding box, its
  // window reaching r beyond it, so each value there is the whole image's.
  const cv::Rect box = cv::boundingRect(regions);
  if (box.empty()) return;
  const cv::Rect around = grown_within(box, r, dark.size());
  cv::Mat peak;
  cv::dilate(dark(around), peak, cv::getStructuringElement(cv::MORPH_RECT, {2 * r + 1, 2 * r + 1}));
  for (int y = box.y; y < box.br().y; ++y) {
    const uchar *d = dark.ptr<uchar>(y), *p = peak.ptr<uchar>(y - around.y), *k = regions.ptr<uchar>(y);
    uchar *c = ink.coverage.ptr<uchar>(y), *b = ink.binary.ptr<uchar>(y);
    for (int x = box.x; x < box.br().x; ++x)
      if (k[x]) {
        if (!made[p[x - around.x]]) make_row(p[x - around.x]);
        const int at = p[x - around.x] * 256 + d[x];
        c[x] = on[at];
        b[x] = on_binary[at];
      }
  }
}

// The share of the inside of the hysteresis regions (a pixel in from their edge) that is not
// ink: about none for solid or anti-aliased ink, a lot where pencil grain leaves holes.
double holes(const cv::Mat& regions, const cv::Mat& binary) {
  cv::Mat inside;
  cv::erode(regions, inside, cv::Mat());
  int64_t n = 0, open = 0;
  for (int y = 0; y < inside.rows; ++y) {
    const uchar *in = inside.ptr<uchar>(y), *b = binary.ptr<uchar>(y);
    int row_n = 0, row_open = 0;  // a row's counts in 32 bits: the loop vectorises
    for (int x = 0, w = inside.cols; x < w; ++x) row_n += in[x], row_open += in[x] & (b[x] ^ 1);  // both 0/1
    n += row_n, open += row_open;
  }
  return n > 0 ? static_cast<double>(open) / static_cast<double>(n) : 0;
}

}  // namespace

Ink separate_ink(const cv::Mat& gray, const InkOptions& opt) {
  if (gray.empty() || gray.type() != CV_8UC1) throw Error(Code::internal, "separate_ink needs a CV_8UC1 image");
  Histogram h = sampled_histogram(gray);
  OtsuSplit split = otsu(h);
  double lo, hi;
  cv::minMaxLoc(gray, &lo, &hi);
  // Uniform only when the whole image lies within a few gray levels: light falling off across
  // a photo spans more than a thin drawing's ink does, so Otsu's classes may be paper and shadow.
  if (split.dark_count == 0 || hi - lo < kMinContrast) return uniform_ink(gray, h);

  // Stage 1: the paper and the light falling on it, from the pixels that are surely paper,
  // divided out.
  Ink ink;
  // Pixels lighter than midway between Otsu's threshold and the paper class are paper too: on
  // an evenly lit scan or rendering that is all of its paper, anti-aliased fringes included,
  // so such images keep the paper level they always had; in a shadow or a dark corner no pixel
  // is that light, and the local test alone decides.
  cv::Mat paper_mask = sure_paper(gray, opt) | (gray > static_cast<int>((split.threshold + split.bright_mean) / 2));
  // Off the sheet of paper (a desk around it in a photo) nothing is paper, and nothing is ink.
  const cv::Mat off = off_sheet(gray, {opt.stroke_scale, opt.sheet_step});
  if (!off.empty()) {
    paper_mask.setTo(0, off);
    ink.off_sheet = cv::countNonZero(off) / static_cast<double>(off.total());
  }
  LevelCount paper_count;
  for (int y = 0; y < gray.rows; y += kSample) {
    const uchar *g = gray.ptr<uchar>(y), *m = paper_mask.ptr<uchar>(y);
    for (int x = 0; x < gray.cols; x += kSample)
      if (m[x]) paper_count.add(g[x]);
  }
  ink.paper_level = quantile(paper_count.histogram(), 0.5);
  const int cell = std::max(4, static_cast<int>(std::lround(opt.background_cell_px)));
  PaperLevels paper(paper_cells(gray, paper_mask, cell, ink.paper_level), cell, gray.cols);
  Histogram nh{}, paper_nh{};
  cv::Mat dark = darkness(gray, paper_mask, off, paper, nh, paper_nh);
  paper_mask.release();

  // Stage 2: levels. Full ink is a low percentile of the ink class; strong ink is darker
  // than midway to it; weak ink is clear of the paper's noise.
  const int ink_cut = otsu(nh).threshold;
  ink.ink_level = quantile(nh, kInkQuantile, 0, ink_cut);
  ink.threshold = opt.threshold ? *opt.threshold : (255.0 + ink.ink_level) / 2;
  ink.noise = paper_noise(paper_nh);
  const double full = 255.0 - ink.ink_level;
  if (full < kMinContrast) return uniform_ink(gray, h);  // only the paper's own noise: no drawing
  ink.weak_threshold = opt.weak_threshold ? *opt.weak_threshold
                                          : 255.0 - std::max(opt.weak_ratio * full, opt.noise_ratio * ink.noise);
  ink.weak_threshold = std::max(ink.weak_threshold, ink.threshold);

  // Stage 3: hysteresis. Weak ink is ink where it is connected to strong ink, so a stroke
  // stays whole where the pencil was light, while isolated grain stays paper; so is a dot
  // tapped lightly.
  const double strong_dark = 255.0 - ink.threshold, weak_dark = 255.0 - ink.weak_threshold;
  Regions regions(dark, weak_dark, strong_dark);
  double width = ridge_width(regions.ink());
  regions.add_light_marks(width, off);

  // Stage 4: coverage against the stroke's own darkness (the darkest ink within about a
  // stroke width), capped at full ink: a light pencil stroke is read at half its own
  // darkness, so its width reads right.
  auto radius = [&] { return std::clamp(static_cast<int>(std::ceil(opt.peak_radius_ratio * width)), 1, 64); };
  read_coverage(ink, dark, regions.ink(), radius(), full);
  // Grainy pencil leaves holes and ragged edges at half its darkness: such ink is smoothed at
  // a fraction of the stroke width and read again.
  ink.holes = holes(regions.ink(), ink.binary);
  if (ink.holes > opt.grain_holes) {
    ink.grain_sigma_px = std::clamp(opt.grain_sigma_ratio * width, 0.7, 8.0);
    smooth(dark, ink.grain_sigma_px);
    regions = Regions(dark, weak_dark, strong_dark);
    width = ridge_width(regions.ink());
    regions.add_light_marks(width, off);
    read_coverage(ink, dark, regions.ink(), radius(), full);
  }
  ink.peak_radius_px = radius();
  return ink;
}

}  // namespace sv
