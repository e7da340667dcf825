// What the geometric edits share: shapes re-derived with new ends, points and parameters along
// a shape, the joints where primitives meet (kept together when one of them moves), and the
// selection of primitives an edit works on.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/scene.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::edit {

constexpr double kJointEps = 1e-3;  // ends this close are one joint

// Ends closer than this are meant to meet: max(1, half the stroke width).
double join_px(const Scene& s);
// The scene's fit tolerance (fit.tolerance_px, 1 px when absent).
double tolerance_of(const Scene& s);

// The arc from a through m to b (a line when the three are collinear).
Shape through(Vec2 a, Vec2 m, Vec2 b);
// The shape with new ends: a line between them, an arc through its old middle point.
Shape with_ends(const Shape& s, Vec2 a, Vec2 b);
// Arc-length fraction of the point of s nearest q (circles: from angle 0).
double param_of(const Shape& s, Vec2 q);
Vec2 nearest_on(const Shape& s, Vec2 q);
// Points running the way the shape runs.
Polyline oriented(Polyline pts, const Shape& s);
// What a primitive stands for: its source points, else dense samples of its shape.
Polyline points_of(const Scene& s, const Primitive& p);
// A circle through the points (Kasa, refined), if they are not collinear.
std::optional<fitting::Circle> circle_of(const Polyline& pts);
// The best arc from a to b through the points (either turning sense); nullopt if none.
std::optional<Shape> arc_between(Vec2 a, Vec2 b, const Polyline& pts);

// Whether an end of a primitive other than those in `skip` is at (within kJointEps of) q.
bool shared_with_others(const Scene& s, Vec2 q, const std::set<std::string>& skip);
// Moves the ends of primitives outside `skip` that sit at a move's origin to its target; the
// primitives moved are added to `touched`.
void carry_joints(Scene& s, const std::vector<std::pair<Vec2, Vec2>>& moves, const std::set<std::string>& skip,
                  std::set<std::string>& touched);
// Recomputes a primitive's fit figures against its source points (when it has any).
void refresh_fit(const Scene& s, Primitive& p);
// Replaces the primitives `old` by `fresh` (at the place of the first of them) in the list;
// settling places them in the tour.
void splice_primitives(Scene& s, const std::set<std::string>& old, const std::vector<Primitive>& fresh);

// The primitives the ids name, in order: invalid_selection for an id listed twice, not_found
// for an unknown one.
std::vector<const Primitive*> selection(const Scene& s, const std::vector<std::string>& ids);

}  // namespace sv::edit
