// Helpers the tool handlers share: other revisions, the source raster, number formatting for
// deterministic output, primitive summaries and the standard picture of a scene.
#pragma once
#include <opencv2/core.hpp>
#include <string>

#include "eval/drawing.hpp"
#include "eval/ink_reference.hpp"
#include "eval/score.hpp"
#include "tools/region.hpp"
#include "tools/tool.hpp"
#include "render/figure.hpp"

namespace sv {

// A revision named by `ref` (HEAD, a branch, final, an id or a unique prefix: a name, never a
// path; without a store, the context's own id or a prefix of it), or the context's own scene
// when `ref` is null or empty. Unknown names throw Error(not_found).
const Scene& revision_scene(const ToolContext& ctx, const json& ref, Scene& holder, std::string* id = nullptr);

// The source raster (8-bit gray): the store's blob, else the file at source.path when its
// SHA-256 matches. Empty with `why` set when neither is available.
cv::Mat source_raster(const ToolContext& ctx, const Scene& s, std::string* why);

// What the fidelity of `s` is measured against (eval/ink_reference.hpp); when that is the stroke
// graph, the warning saying so is added to `warnings` (once).
FidelityReference fidelity_reference(const ToolContext& ctx, const Scene& s, std::vector<std::string>& warnings);
json rect_json(const BBox& b);  // {"kind": "rect", "rect": [x0, y0, x1, y1]}

// A shape's geometry as the catalog's PrimitiveDetail has it: type, p0, p1, bulge, center, radius.
json shape_json(const Shape& s);
// The catalog's PrimitiveSummary.
json primitive_summary(const Primitive& p, const Drawing& d);
// Endpoints where a shape is entered and left (circles: the point at angle 0).
Vec2 shape_mid(const Shape& s);

// The context's scene with each primitive's issues joined by what the diagnostics find
// (AnalyzeGeometricFit, IdentifyNoise, CheckTopology, CheckForConsistency at their defaults):
// findings are computed when a request asks for them (a has_issue filter, colour by issue),
// never stored by a read-only tool.
Scene with_diagnosed_issues(const ToolContext& ctx);
bool wants_issues(const json& filter);

// Which primitives a request's filter and scope keep, in draw order.
std::vector<const Primitive*> filtered_primitives(const Scene& s, const Drawing& d, const json& filter,
                                                  const Scope& scope);

// The standard picture: the scope's area (or the whole image), the source underneath when
// available, every primitive faded or coloured by `color_of`.
View scene_view(const ToolContext& ctx, const Scene& s, const Scope& scope, const std::string& title,
                bool with_source = true, int target_px = 720);
// A crop around `focus` (padded by `pad` px).
View crop_view(const ToolContext& ctx, const Scene& s, const BBox& focus, double pad, const std::string& title,
               int target_px = 360);

// Up to nine crops of findings as one sheet; `draw` adds the finding's marks to its tile.
cv::Mat findings_sheet(const ToolContext& ctx, const Scene& s, const std::vector<BBox>& boxes,
                       const std::vector<std::string>& titles, const std::function<void(View&, size_t)>& draw);

// Before and after, side by side, with a third panel of what changed (removed red, added
// green, changed orange, each labelled with its id): CompareRevisions and SimulateEdit.
cv::Mat change_sheet(const Scene& a, const Scene& b, const std::string& title_a, const std::string& title_b,
                     const std::vector<std::string>& added, const std::vector<std::string>& removed,
                     const std::vector<std::string>& changed);

}  // namespace sv
