// What a routed scene leaves undrawn: the largest distance from its primitives to the strokes
// the robot draws (the command stream replayed), sampled every half pixel.
#pragma once
#include <algorithm>
#include <cmath>

#include "core/scene.hpp"
#include "robot/replay.hpp"

inline double undrawn_px(const sv::Scene& s) {
  sv::Replay r = sv::replay(*s.commands, s.robot->start, 0.05);
  double worst = 0;
  for (const sv::Primitive& p : *s.primitives)
    for (sv::Vec2 q : p.shape.sample(0.5)) {
      double d = INFINITY;
      for (const auto& st : r.strokes)
        for (size_t i = 1; i < st.size(); ++i) d = std::min(d, sv::point_segment_distance(q, st[i - 1], st[i]));
      worst = std::max(worst, d);
    }
  return worst;
}
