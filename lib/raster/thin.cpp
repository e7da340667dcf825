#include "raster/thin.hpp"

#include <array>
#include <bit>
#include <vector>

#include "core/error.hpp"

namespace sv {
namespace {

// Neighbours counter-clockwise from east, as Yokoi numbers them: x1 = E, x2 = NE, x3 = N,
// x4 = NW, x5 = W, x6 = SW, x7 = S, x8 = SE. Bit k-1 of a configuration holds x_k.
constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr int kDy[8] = {0, -1, -1, -1, 0, 1, 1, 1};

// Yokoi's connectivity number for 8-connected ink: the number of ink components around a
// pixel that deleting it would separate. A pixel is simple when it is exactly 1.
int connectivity8(unsigned config) {
  auto bg = [&](int k) { return ((config >> (k % 8)) & 1u) ? 0 : 1; };
  int n = 0;
  for (int k = 0; k < 8; k += 2) n += bg(k) - bg(k) * bg(k + 1) * bg(k + 2);
  return n;
}

// Deletable: simple, and not an end point (which would shorten strokes) or isolated.
std::array<bool, 256> deletable_table() {
  std::array<bool, 256> t{};
  for (unsigned c = 0; c < 256; ++c) t[c] = connectivity8(c) == 1 && std::popcount(c) >= 2;
  return t;
}

}  // namespace

cv::Mat thin(const cv::Mat& binary) {
  if (binary.empty() || binary.type() != CV_8UC1) throw Error(Code::internal, "thin needs a CV_8UC1 image");
  static const std::array<bool, 256> deletable = deletable_table();
  const int w = binary.cols, h = binary.rows, stride = w + 2;
  // Padded copy: the one-pixel frame of paper removes all bounds checks.
  std::vector<uchar> img(static_cast<size_t>(stride) * (h + 2), 0);
  for (int y = 0; y < h; ++y) {
    const uchar* b = binary.ptr<uchar>(y);
    uchar* row = img.data() + static_cast<size_t>(y + 1) * stride + 1;
    for (int x = 0; x < w; ++x) row[x] = b[x] ? 1 : 0;
  }
  int off[8];
  for (int k = 0; k < 8; ++k) off[k] = kDy[k] * stride + kDx[k];
  auto config = [&](size_t i) {
    unsigned c = 0;
    for (int k = 0; k < 8; ++k) c |= static_cast<unsigned>(img[i + off[k]]) << k;
    return c;
  };

  // The border: ink pixels with paper among their 4-neighbours; only they can be peeled.
  std::vector<size_t> border;
  std::vector<uchar> on_border(img.size(), 0);
  for (size_t i = stride; i + stride < img.size(); ++i)
    if (img[i] && (!img[i + 1] || !img[i - 1] || !img[i + stride] || !img[i - stride])) {
      border.push_back(i);
      on_border[i] = 1;
    }

  // Sub-iterations: the neighbour that must be paper (N, S, E, W).
  const int sides[4] = {off[2], off[6], off[0], off[4]};
  std::vector<size_t> candidates;
  for (bool changed = true; changed;) {
    changed = false;
    for (int side : sides) {
      candidates.clear();
      for (size_t i : border)
        if (img[i] && !img[i + side] && deletable[config(i)]) candidates.push_back(i);
      for (size_t i : candidates) {
        if (!deletable[config(i)]) continue;
        img[i] = 0;
        changed = true;
        for (int k = 0; k < 8; ++k) {
          size_t j = i + off[k];
          if (img[j] && !on_border[j]) {
            on_border[j] = 1;
            border.push_back(j);
          }
        }
      }
    }
    std::erase_if(border, [&](size_t i) { return !img[i]; });
  }

  cv::Mat out(h, w, CV_8U);
  for (int y = 0; y < h; ++y) {
    const uchar* row = img.data() + static_cast<size_t>(y + 1) * stride + 1;
    std::copy(row, row + w, out.ptr<uchar>(y));
  }
  return out;
}

cv::Mat neighbour_count(const cv::Mat& skeleton) {
  cv::Mat count = cv::Mat::zeros(skeleton.size(), CV_8U);
  for (int y = 0; y < skeleton.rows; ++y)
    for (int x = 0; x < skeleton.cols; ++x) {
      if (!skeleton.at<uchar>(y, x)) continue;
      int n = 0;
      for (int k = 0; k < 8; ++k) {
        int xx = x + kDx[k], yy = y + kDy[k];
        if (xx >= 0 && yy >= 0 && xx < skeleton.cols && yy < skeleton.rows && skeleton.at<uchar>(yy, xx)) ++n;
      }
      count.at<uchar>(y, x) = static_cast<uchar>(n);
    }
  return count;
}

}  // namespace sv
