#include "eval/ink_reference.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "graph/skeletonize.hpp"
#include "raster/image.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

// The cached file is the reference of one image as this version of sv separates it.
constexpr int kCacheVersion = 1;

std::string cache_name(const std::string& sha) { return "ink-" + sha + ".json"; }

// Coordinates are written exactly (JSON numbers round-trip a double), so a cached reference
// measures the same as a fresh one.
std::string to_cache(const std::vector<Polyline>& paths) {
  json polys = json::array();
  for (const auto& pl : paths) {
    json pts = json::array();
    for (Vec2 p : pl) pts.push_back({p.x, p.y});
    polys.push_back(std::move(pts));
  }
  return json{{"version", kCacheVersion}, {"sv", SV_VERSION}, {"polylines", polys}}.dump();
}

std::optional<std::vector<Polyline>> from_cache(const std::string& text) {
  try {
    json j = json::parse(text);
    if (j.value("version", 0) != kCacheVersion || j.value("sv", "") != SV_VERSION) return std::nullopt;
    std::vector<Polyline> out;
    for (const auto& pl : j.at("polylines")) {
      Polyline p;
      for (const auto& q : pl) p.push_back({q.at(0).get<double>(), q.at(1).get<double>()});
      out.push_back(std::move(p));
    }
    return out;
  } catch (const json::exception&) {
    return std::nullopt;  // a torn or foreign file is only a cache miss
  }
}

}  // namespace

std::string FidelityReference::describe() const {
  return from_ink ? "the source image's ink centrelines" : "the stroke graph's centrelines";
}

std::vector<Polyline> graph_paths(const Scene& s) {
  std::vector<Polyline> out;
  if (!s.graph) return out;
  for (const auto& e : s.graph->edges) out.push_back(e.points);
  return out;
}

std::vector<Polyline> ink_centrelines(const cv::Mat& gray) {
  Scene traced;
  skeletonize(traced, gray);
  return graph_paths(traced);
}

cv::Mat source_image(const Scene& s, const Store* store, std::string* why) {
  if (!s.source) {
    *why = "the scene has no source image";
    return {};
  }
  const std::string& sha = s.source->sha256;
  if (store && store->has_object(sha)) return decode_image(store->read_object(sha));
  if (!s.source->path.empty() && s.source->path != "-") {
    // Only a regular file within the image limit, known before a byte is read: a scene may name
    // a FIFO, a device or a file of gigabytes.
    std::string bytes;
    try {
      bytes = read_regular_file(s.source->path, kMaxImageFileBytes, Code::invalid_raster);
    } catch (const Error& e) {
      *why = "the source image is not in a store and cannot be read at " + s.source->path + ": " +
             (e.code() == Code::not_found ? std::string("no such file") : e.what());
      return {};
    }
    if (sha256_hex(bytes) == sha) return decode_image(bytes);
    *why = "the file at " + s.source->path + " is not the source any more (its SHA-256 differs)";
    return {};
  }
  *why = "the source image is neither in a store nor readable at " + s.source->path;
  return {};
}

FidelityReference fidelity_reference(const Scene& s, Store* store) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::vector<Polyline>>> computed;  // by image SHA-256
  FidelityReference ref;
  const std::string sha = s.source ? s.source->sha256 : "";
  std::shared_ptr<const std::vector<Polyline>> paths;
  if (!sha.empty()) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = computed.find(sha);
    if (it != computed.end()) paths = it->second;
  }
  if (!paths && store && is_object_id(sha))
    if (auto text = store->read_cache(cache_name(sha)))
      if (auto cached = from_cache(*text)) paths = std::make_shared<const std::vector<Polyline>>(std::move(*cached));
  std::string why;
  if (!paths) {
    cv::Mat gray = source_image(s, store, &why);
    if (!gray.empty()) {
      paths = std::make_shared<const std::vector<Polyline>>(ink_centrelines(gray));
      if (store && is_object_id(sha)) store->write_cache(cache_name(sha), to_cache(*paths));
    }
  }
  if (!paths) {
    ref.paths = graph_paths(s);
    ref.warning = "fidelity is measured against the stroke graph, not the source's ink: " + why;
    return ref;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    computed.emplace(sha, paths);
  }
  ref.paths = *paths;
  ref.from_ink = true;
  return ref;
}

}  // namespace sv
