// What every edit of a scene shares: fresh ids that never repeat within a history, and the
// settling that keeps an edited scene consistent — relations of the touched primitives
// re-solved, the route re-optimized, the command stream and the simulation redone — so that
// no revision ever holds a tour or a time that belongs to other geometry.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "fit/fit.hpp"
#include "route/route.hpp"

namespace sv {

// The next primitive id (p_NNNN) / region id (r_NNNN): one past the highest the scene's
// history has used. The high-water marks live in the scene ("id_marks"), so an id deleted in
// an earlier revision is never handed out again.
std::string fresh_primitive_id(Scene& s);
std::string fresh_region_id(Scene& s);
// Raises `after`'s high-water marks to `before`'s. An edit calls it on its copy before it removes
// anything, so that an id it takes out is not handed to a new primitive of the same edit (RerunStage
// once gave a refitted line the id of an unchanged primitive it kept: two primitives, one id).
void carry_id_marks(const Scene& before, Scene& after);

// A copy of the scene to edit (throws Error(invalid_scene) when it has no primitives); ids the
// edit removes stay used.
Scene editable(const Scene& s);
// The index of primitive `id` in s.primitives; throws Error(not_found).
size_t primitive_index(const Scene& s, const std::string& id);
// The id list as short text: "p_0001,p_0002".
std::string id_list(const std::vector<std::string>& ids);

// The route options that reproduce the scene's own routing: its robot scale, pen time and
// start (its pose when fixed; free stays free), and the user's route.* settings from its config.
RouteOptions route_options_of(const Scene& s);

// The declaration of a parameter of any stage (skeleton.*, graph.*, fit.*, route.*); nullptr for
// an unknown key.
const ParamSpec* find_stage_param(const std::string& key);

// Re-solves the scene's relations that name a touched primitive with the beautify solver,
// each primitive held within the fit tolerance of its source points; a relation that can no
// longer hold, or names a primitive that is gone, is dropped and reported in the returned
// warnings.
std::vector<std::string> resolve_relations(Scene& s, const std::set<std::string>& touched);

// Enforces relation records ({"kind", "primitives": [ids], "axis"?}, kinds as EnforceRelation's
// plus the fit stage's "coincident") together, through the beautify solver (fitting::enforce):
// chains are the primitives of one graph edge in span order (a primitive without provenance is
// its own chain, held only to its own shape), chain ends that coincide are junctions that move
// together. On success the primitives are updated and the records returned with their
// residual ("residual_deg" or "residual_px"); `moved` gets the ids whose shape changed.
// Throws Error(unsolvable_constraint) with details {reason, relation, residual,
// primitive_id, max_px, tolerance_px} when a relation cannot be made exact or a primitive
// would leave tolerance, and Error(invalid_selection) for a relation that names the wrong
// kind or number of primitives or a malformed axis.
json enforce_relations(Scene& s, const json& relations, std::set<std::string>* moved = nullptr);

// Makes an edited scene consistent with its geometry. `before` is the scene the edit started
// from: the id marks are carried over, relations re-solved (when anything was touched), the
// tour kept and re-emitted (route_keeping: steps of removed primitives dropped, new ones and,
// when `reroute`, the touched ones placed where they cost least), and the simulation re-run
// when the scene had one. Primitives must be valid (finite, non-degenerate) on entry.
void settle(const Scene& before, Scene& after, const std::set<std::string>& touched, bool reroute,
            std::vector<std::string>& warnings);

// Throws Error(invalid_selection) unless the shape is finite and drawable (a line of positive
// length, an arc with a finite bulge, a circle of positive radius).
void check_shape(const Shape& s, const std::string& what);
// Throws Error(invalid_selection) unless the shape lies within the scene's page extended by the
// page's own size on every side.
void check_on_page(const Shape& s, const Scene& scene, const std::string& what);

}  // namespace sv
