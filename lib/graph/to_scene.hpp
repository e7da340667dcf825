// The finished stroke graph as the scene's Graph.
#pragma once
#include "core/scene.hpp"
#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Copies the live nodes and edges: vertices v_0001... in order of position (y, then x),
// edges e_0001... in order of their vertices, each edge running from the lower vertex id to
// the higher. Points are spaced at most `spacing` apart (straight runs are filled in).
// Kinds: "end" (degree 1), "junction" (3 or more; 2 where a stroke meets the end of a filled
// mark's path), "loop" (the anchor of a closed edge),
// "dot" (a zero-length stroke: its edge is the single point, from and to the dot, so its
// degree is 2). Edge width = mean measured ink width, else `default_width`; `filled` is kept.
Graph to_scene_graph(const StrokeGraph& g, double default_width, double spacing);

}  // namespace sv::graph
