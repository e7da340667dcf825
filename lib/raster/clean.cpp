#include "raster/clean.hpp"

#include <opencv2/imgproc.hpp>
#include <vector>

namespace sv {
namespace {

// Sets pixels whose label is selected to `value`.
void paint_labels(cv::Mat& binary, const cv::Mat& labels, const std::vector<uchar>& selected, uchar value) {
  for (int y = 0; y < binary.rows; ++y) {
    const int* l = labels.ptr<int>(y);
    uchar* b = binary.ptr<uchar>(y);
    for (int x = 0; x < binary.cols; ++x)
      if (selected[l[x]]) b[x] = value;
  }
}

}  // namespace

int remove_specks(cv::Mat& binary, double min_area) {
  cv::Mat labels, stats, centroids;
  int n = cv::connectedComponentsWithStats(binary, labels, stats, centroids, 8, CV_32S);
  std::vector<uchar> speck(n, 0);
  int removed = 0;
  for (int i = 1; i < n; ++i)
    if (stats.at<int>(i, cv::CC_STAT_AREA) < min_area) speck[i] = 1, ++removed;
  if (removed) paint_labels(binary, labels, speck, 0);
  return removed;
}

int fill_holes(cv::Mat& binary, double max_area) {
  cv::Mat paper = binary == 0, labels, stats, centroids;
  int n = cv::connectedComponentsWithStats(paper, labels, stats, centroids, 4, CV_32S);
  std::vector<uchar> hole(n, 0);
  int filled = 0;
  for (int i = 1; i < n; ++i) {
    int x = stats.at<int>(i, cv::CC_STAT_LEFT), y = stats.at<int>(i, cv::CC_STAT_TOP);
    int w = stats.at<int>(i, cv::CC_STAT_WIDTH), h = stats.at<int>(i, cv::CC_STAT_HEIGHT);
    bool enclosed = x > 0 && y > 0 && x + w < binary.cols && y + h < binary.rows;
    if (enclosed && stats.at<int>(i, cv::CC_STAT_AREA) <= max_area) hole[i] = 1, ++filled;
  }
  if (filled) paint_labels(binary, labels, hole, 1);
  return filled;
}

}  // namespace sv
