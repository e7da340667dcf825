#include "raster/thin.hpp"

#include <array>
#include <cstdint>
#include <bit>
#include <vector>

#include <opencv2/core.hpp>

#include "core/error.hpp"
#include "raster/scan.hpp"

namespace sv {
namespace {

// Neighbours counter-clockwise from east, as Yokoi numbers them: x1 = E, x2 = NE, x3 = N,
// x4 = NW, x5 = W, x6 = SW, x7 = S, x8 = SE. Bit k-1 of a configuration holds x_k.
constexpr int kDx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr int kDy[8] = {0, -1, -1, -1, 0, 1, 1, 1};
constexpr uchar kInkBit = 1, kQueuedBit = 2;

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
  // One buffer with a frame of paper (no bounds checks): bit 0 is ink, bit 1 marks a pixel
  // queued for the next cycle. The result is a view of its inside.
  cv::Mat padded;
  cv::copyMakeBorder(binary, padded, 1, 1, 1, 1, cv::BORDER_CONSTANT, 0);
  cv::min(padded, 1, padded);
  CV_Assert(padded.isContinuous() && padded.total() < (size_t(1) << 32));
  uchar* img = padded.data;
  const size_t size = padded.total();
  const int stride = padded.cols;
  int off[8];
  for (int k = 0; k < 8; ++k) off[k] = kDy[k] * stride + kDx[k];
  auto ink = [&](size_t i) { return img[i] & kInkBit; };
  auto config = [&](size_t i) {
    unsigned c = 0;
    for (int k = 0; k < 8; ++k) c |= static_cast<unsigned>(img[i + off[k]] & kInkBit) << k;
    return c;
  };

  // Pixels to examine: at first the border (ink with paper among its 4-neighbours), then
  // those next to a deleted pixel, in the same cycle and the next; nothing else can change.
  // (32-bit indices: the lists are the largest allocations here.)
  std::vector<uint32_t> active, next, candidates;
  for (size_t i = next_set(img, stride, size - stride); i < size - stride; i = next_set(img, i + 1, size - stride))
    if (!ink(i + 1) || !ink(i - 1) || !ink(i + stride) || !ink(i - stride)) active.push_back(i);

  // Sub-iterations: the neighbour that must be paper (N, S, E, W).
  const int sides[4] = {off[2], off[6], off[0], off[4]};
  while (!active.empty()) {
    next.clear();
    for (int side : sides) {
      candidates.clear();
      for (uint32_t i : active)
        if (ink(i) && !ink(i + side) && deletable[config(i)]) candidates.push_back(i);
      for (uint32_t i : candidates) {
        if (!ink(i) || !deletable[config(i)]) continue;
        img[i] = 0;
        for (int k = 0; k < 8; ++k) {
          size_t j = i + off[k];
          if (img[j] == kInkBit) {
            img[j] |= kQueuedBit;
            next.push_back(j);
            active.push_back(j);
          }
        }
      }
    }
    for (uint32_t i : next) img[i] &= kInkBit;
    std::erase_if(next, [&](uint32_t i) { return !ink(i); });
    active.swap(next);
  }
  return padded(cv::Rect(1, 1, binary.cols, binary.rows));
}

cv::Mat neighbour_count(const cv::Mat& skeleton) {
  cv::Mat on = skeleton != 0, padded;
  cv::copyMakeBorder(on / 255, padded, 1, 1, 1, 1, cv::BORDER_CONSTANT, 0);
  cv::Mat count = cv::Mat::zeros(skeleton.size(), CV_8U);
  for (int y = 0; y < skeleton.rows; ++y) {
    const uchar *up = padded.ptr<uchar>(y) + 1, *mid = padded.ptr<uchar>(y + 1) + 1, *down = padded.ptr<uchar>(y + 2) + 1;
    uchar* out = count.ptr<uchar>(y);
    for (int x = 0; x < skeleton.cols; ++x)
      if (mid[x])
        out[x] = static_cast<uchar>(up[x - 1] + up[x] + up[x + 1] + mid[x - 1] + mid[x + 1] + down[x - 1] + down[x] + down[x + 1]);
  }
  return count;
}

}  // namespace sv
