// Ranking measured candidate edits by what is asked for: time saved (and pen-ups, primitives)
// per fidelity lost, fidelity lost on texture and decoration weighing less than on silhouettes
// and interior features.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv::suggest {

// What applying a candidate did: the edit's scoreboard before and after (edit_metrics).
struct Effect {
  json before, after;
  double role_weight = 1;  // of the primitives it touches (role_weight below)
  double delta(const char* key) const;  // after - before; 0 when either lacks it
};

// How much fidelity the primitives' semantic roles ask for: texture and decoration 0.5,
// silhouettes and interior features 2, the rest 1 (the largest among them).
double role_weight(const Scene& s, const std::vector<std::string>& ids);

// Objectives are the catalog's: draw_time, pixel_fidelity, semantic_fidelity, primitive_count,
// pen_up_count.
// Fidelity lost: f1 at the default tolerance, and a tenth of f1 at 1 px (a shift within the
// tolerance still counts a little), weighted by the roles when semantic_fidelity is asked for.
double fidelity_loss(const Effect& e, const std::vector<std::string>& objectives);
// The gain on the other objectives (fractions of the scene's own figures); negative when the
// edit makes them worse.
double gain(const Effect& e, const std::vector<std::string>& objectives);
// Gain per fidelity lost; only a positive merit is worth proposing. An edit that gains nothing
// ranks by what it costs: the gain (zero or negative) less the fidelity lost, so of two slower
// edits the one that also loses fidelity ranks below.
double merit(const Effect& e, const std::vector<std::string>& objectives);

// The largest losses a caller accepts (none: no bound): f1 and f1 at 1 px lost, chamfer gained.
struct Budget {
  std::optional<double> f1, f1_1px, chamfer_px;
  bool bounded() const { return f1 || f1_1px || chamfer_px; }
};
// The bounds the effect exceeds, named as the tools' requests name them: max_f1_loss,
// max_f1_1px_loss, max_chamfer_gain_px; none when it stays within the budget.
std::vector<std::string> exceeded(const Effect& e, const Budget& b);
bool fits(const Effect& e, const Budget& b);
// low: f1 within 0.001 and f1 at 1 px within 0.01; medium: within 0.005 and 0.05; else high.
std::string risk(const Effect& e);

}  // namespace sv::suggest
