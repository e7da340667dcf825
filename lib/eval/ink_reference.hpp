// What fidelity is measured against: the centrelines of the source image's own ink, separated
// always the same way (the skeleton stage with its default settings), whatever settings the
// scene's stages ran with and whatever they or later edits did to the stroke graph. So losing
// ink always costs (a dot dropped upstream is missed ink) and cleaning up what is not ink (a
// thinning spur, a speck) never does.
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

class Store;

struct FidelityReference {
  std::vector<Polyline> paths;  // a dot is a single point
  bool from_ink = false;        // false: the stroke graph's edges (the source image is unavailable)
  std::string warning;          // why it is not from ink ("" when it is)
  std::string describe() const;  // how the reference reads in text
};

// The centrelines of a gray raster's ink (CV_8UC1, decode_image's output): the stroke graph the
// skeleton stage makes with default settings, as polylines.
std::vector<Polyline> ink_centrelines(const cv::Mat& gray);

// The source image of a scene (8-bit gray): the store's blob named by source.sha256, else the
// file at source.path when its SHA-256 matches. Empty with `why` set when neither is available.
cv::Mat source_image(const Scene& s, const Store* store, std::string* why);

// The reference of a scene: the ink centrelines of its source image, cached by the image's
// SHA-256 in the process and, with a store, in .svrev/cache/ink-SHA.json (tools run as separate
// processes); else the stroke graph, with a warning that says so.
FidelityReference fidelity_reference(const Scene& s, Store* store);

// The stroke graph's edges as polylines (empty without a graph).
std::vector<Polyline> graph_paths(const Scene& s);

}  // namespace sv
