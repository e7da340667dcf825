// What must hold for a scene to become a revision, beyond the schema: ids are unique and every
// reference names something that is there. The store checks this before it writes an object and
// fsck checks it for every stored revision, so a scene a tool got wrong is refused, never
// recorded where later reads would fail on it.
#pragma once
#include <string>

#include "core/scene.hpp"

namespace sv {

// Sizes a scene may have, so that what the tools do with it is bounded by its size, not by its
// numbers (they sample the strokes every pixel or so, and rasterize the page around them).
// Geometry stays on the source image's page and a margin of its longer side around it (within
// kMaxCoordinatePx of the origin without a source): one arc of bulge 1e6 is 1.6e12 px long.
constexpr double kMaxCoordinatePx = 1e6;
constexpr double kMaxStrokeLengthPx = 1 << 24;  // all the primitives together
constexpr double kMaxCommandValue = 1e7;        // px of a line or an arc's radius, degrees of a turn

// Where a drawing's geometry may lie: the source image's page grown by its longer side on every
// side; without a source, the square within `reach` of the origin.
BBox page_with_margin(const Scene& s, double reach);

// The first number beyond those sizes (or not finite), as one line, or "".
std::string check_scene_extent(const Scene& s);

// The first violation, as one line naming the ids involved, or "" when the scene holds together:
// its sizes are within check_scene_extent's; primitive, vertex, edge and region ids are each
// unique; tour steps and relations name existing primitives; graph edges name existing vertices.
std::string check_scene_invariants(const Scene& s);

// Throws Error(invalid_scene) unless `doc` (the scene's serialization, to_json(s)) passes the
// scene schema and `s` its invariants; the message says that nothing was written.
void require_writable_scene(const Scene& s, const json& doc);

// What a stage writes without a store: `s` checked as put_scene checks it, given its revision id
// (assign_revision_id), and its document (dump_scene), from one serialization.
std::string sealed_scene_text(Scene& s);

// The revision id of `s`, parsed from `text`: the hash of its canonical bytes. When `text` is
// sealed text (its revision id is the hash of the text without that id, as sealed_scene_text
// writes it) the id is read off the text, without serialising the scene again.
std::string revision_id_of(const Scene& s, const std::string& text);

// The number of an id ("p_0042" -> 42; 0 when it is not of that form).
int id_number(const std::string& id);
// The highest id number of `kind` ("primitive" or "region") the scene has used: its own ids and
// its high-water mark "id_marks" (which remembers deleted ones).
int id_high_mark(const Scene& s, const std::string& kind);

}  // namespace sv
