#include "suggest/rank.hpp"

#include <algorithm>
#include <cmath>

namespace sv::suggest {

namespace {

bool asks(const std::vector<std::string>& objectives, const char* name) {
  return std::find(objectives.begin(), objectives.end(), name) != objectives.end();
}

constexpr double kLossFloor = 1e-3;  // a loss below this is as good as none

}  // namespace

double Effect::delta(const char* key) const {
  if (!before.contains(key) || !after.contains(key)) return 0;
  return after[key].get<double>() - before[key].get<double>();
}

double role_weight(const Scene& s, const std::vector<std::string>& ids) {
  double w = 0;
  for (const auto& id : ids) {
    const Primitive* p = s.primitive(id);
    const std::string role = p ? p->semantic_role : "unknown";
    w = std::max(w, role == "texture" || role == "decoration"            ? 0.5
                    : role == "silhouette" || role == "interior_feature" ? 2.0
                                                                         : 1.0);
  }
  return ids.empty() ? 1.0 : w;
}

double fidelity_loss(const Effect& e, const std::vector<std::string>& objectives) {
  double loss = std::max(0.0, -e.delta("f1")) + 0.1 * std::max(0.0, -e.delta("f1_1px"));
  return asks(objectives, "semantic_fidelity") ? loss * e.role_weight : loss;
}

double gain(const Effect& e, const std::vector<std::string>& objectives) {
  auto share = [&](const char* key) { return -e.delta(key) / std::max(1.0, e.before.value(key, 0.0)); };
  double g = 0;
  if (asks(objectives, "draw_time")) g += share("draw_time_s");
  if (asks(objectives, "primitive_count")) g += share("primitive_count");
  if (asks(objectives, "pen_up_count")) g += share("pen_up_count");
  if (asks(objectives, "pixel_fidelity")) g += std::max(0.0, e.delta("f1"));
  return g;
}

double merit(const Effect& e, const std::vector<std::string>& objectives) {
  const double g = gain(e, objectives);
  return g > 0 ? g / (fidelity_loss(e, objectives) + kLossFloor) : g - fidelity_loss(e, objectives);
}

std::vector<std::string> exceeded(const Effect& e, const Budget& b) {
  // The metrics have three decimals: a loss equal to the budget fits, though in binary
  // 0.98 - 0.96 exceeds 0.02.
  constexpr double slack = 1e-9;
  std::vector<std::string> out;
  if (b.f1 && -e.delta("f1") > *b.f1 + slack) out.push_back("max_f1_loss");
  if (b.f1_1px && -e.delta("f1_1px") > *b.f1_1px + slack) out.push_back("max_f1_1px_loss");
  if (b.chamfer_px && e.delta("chamfer_px") > *b.chamfer_px + slack) out.push_back("max_chamfer_gain_px");
  return out;
}

bool fits(const Effect& e, const Budget& b) { return exceeded(e, b).empty(); }

std::string risk(const Effect& e) {
  const double f1 = -e.delta("f1"), f1_1px = -e.delta("f1_1px");
  if (f1 <= 0.001 && f1_1px <= 0.01) return "low";
  if (f1 <= 0.005 && f1_1px <= 0.05) return "medium";
  return "high";
}

}  // namespace sv::suggest
