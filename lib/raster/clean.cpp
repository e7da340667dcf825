#include "raster/clean.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace sv {
namespace {

// Flood-fill state, kept in bits 1-2 of the binary image itself (bit 0 is ink) so that no
// image-sized buffer is allocated.
constexpr uchar kInk = 1, kStateMask = 6, kSeen = 2, kLarge = 4, kSmall = 6;

// Finds the components of pixels whose ink bit equals `ink` (4- or 8-connected) with at
// most max_area pixels, by flood fills that give up after max_area + 1 pixels or on meeting
// a component already known to be large, so the work is proportional to the pixels
// visited. Ink components are filled from each unvisited ink pixel; paper components only
// from a paper pixel with ink to its left (every enclosed one has such a pixel), which skips
// open paper. With `enclosed`, a component touching the image border counts as large. Calls
// found(pixels) for each small component (flat indices y*w + x). `img` holds 0 and 1.
template <class Found>
int small_components(cv::Mat& img, bool ink, int connectivity, double max_area, bool enclosed, Found found) {
  static const int dx[8] = {1, 0, -1, 0, 1, 1, -1, -1}, dy[8] = {0, 1, 0, -1, 1, -1, 1, -1};
  const int w = img.cols, h = img.rows;
  auto at = [&](int x, int y) -> uchar& { return img.at<uchar>(y, x); };
  auto member = [&](int x, int y) { return ((at(x, y) & kInk) != 0) == ink; };
  std::vector<int> comp;
  int n = 0;
  for (int y = 0; y < h; ++y) {
    const uchar* row = img.ptr<uchar>(y);
    // Every start sits at or just after a byte 1 (memchr's pass): unvisited ink has no state
    // bits, and while paper is filled the ink is never marked.
    for (const uchar* one = row; (one = static_cast<const uchar*>(std::memchr(one, kInk, row + w - one))); ++one) {
      const int x = static_cast<int>(one - row) + (ink ? 0 : 1);
      if (!ink && (x >= w || row[x] != 0)) continue;
      comp.assign(1, y * w + x);
      at(x, y) |= kSeen;
      bool large = false;
      for (size_t k = 0; k < comp.size() && !large; ++k) {
        int cx = comp[k] % w, cy = comp[k] / w;
        if (enclosed && (cx == 0 || cy == 0 || cx == w - 1 || cy == h - 1)) large = true;
        for (int d = 0; d < connectivity && !large; ++d) {
          int nx = cx + dx[d], ny = cy + dy[d];
          if (nx < 0 || ny < 0 || nx >= w || ny >= h || !member(nx, ny)) continue;
          uchar& s = at(nx, ny);
          if ((s & kStateMask) == kLarge) large = true;
          else if (!(s & kStateMask)) s |= kSeen, comp.push_back(ny * w + nx);
        }
        if (comp.size() > max_area) large = true;
      }
      for (int p : comp) at(p % w, p / w) = (at(p % w, p / w) & kInk) | (large ? kLarge : kSmall);
      if (!large) found(comp), ++n;
    }
  }
  cv::bitwise_and(img, kInk, img);
  return n;
}

}  // namespace

int remove_specks(cv::Mat& binary, double min_area) {
  const double largest = std::ceil(min_area) - 1;  // whole pixels fewer than min_area
  std::vector<int> specks;
  int n = small_components(binary, true, 8, largest, false,
                           [&](const std::vector<int>& c) { specks.insert(specks.end(), c.begin(), c.end()); });
  for (int p : specks) binary.at<uchar>(p / binary.cols, p % binary.cols) = 0;
  return n;
}

int fill_holes(cv::Mat& binary, double max_area) {
  std::vector<int> holes;
  int n = small_components(binary, false, 4, max_area, true,
                           [&](const std::vector<int>& c) { holes.insert(holes.end(), c.begin(), c.end()); });
  for (int p : holes) binary.at<uchar>(p / binary.cols, p % binary.cols) = 1;
  return n;
}

}  // namespace sv
