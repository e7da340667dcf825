#include "cli/refine.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <optional>

#include "cli/progress.hpp"
#include "cli/stage.hpp"
#include "cli/tool_command.hpp"
#include "cli/values.hpp"
#include "core/error.hpp"
#include "suggest/rank.hpp"
#include "tools/edit_session.hpp"

namespace sv {

namespace {

struct RefineOptions {
  std::string input = "-";
  // Fidelity first: a shift of a pixel is what people see at the image's scale (f1 at the
  // scorer's tolerance forgives it), so the default spends little of it.
  double max_f1_loss = 0.005, max_f1_1px_loss = 0.02, max_chamfer_gain_px = 0.1;
  int max_steps = 200;
  double min_gain_ms = 50;
};

// Stale candidates measured again in a row without one taken before a fresh list is asked for.
constexpr int kStaleTries = 12;

double metric(const json& m, const char* key) { return m.contains(key) ? m[key].get<double>() : 0.0; }

// Within the budget: the whole refinement, measured against the scoreboard it started from, by
// the rule SuggestOptimizations applies to one edit (an agent asks it for what is left).
bool within_budget(const json& start, const json& after, const RefineOptions& o) {
  return suggest::fits({start, after}, {o.max_f1_loss, o.max_f1_1px_loss, o.max_chamfer_gain_px});
}

int run_refine(const RefineOptions& o, const CommonOptions& common) {
  std::optional<Store> store = open_store(common);
  Scene scene;
  std::string rid = read_scene_input(o.input, common, store, scene, "sv-edit refine");
  // Each step is recorded on the one before it, the first on the revision read (a scene file's
  // result goes on top of HEAD): a stale --rev is refused before any work.
  std::string head_seen = store && common.rev.empty() ? store->head_id() : rid;
  if (store) store->require_head(head_seen);
  const Tool* suggest = find_tool("SuggestOptimizations");
  const json ask = normalize_request(*suggest, {{"optimize_for", {"draw_time", "semantic_fidelity"}}, {"max_candidates", 1000}});
  json start, now, steps = json::array();
  std::vector<std::string> warnings;
  // The ranked list of the last SuggestOptimizations call is worked through in order; after a
  // step the rest are measured again on the new scene (one dry run each, not a new list), and a
  // new list is asked for only when they are used up. A fresh list with nothing to take ends it.
  json pending = json::array();
  size_t next = 0;
  bool fresh = false;
  Progress progress("sv-edit refine", common.quiet);
  for (int k = 1; k <= o.max_steps;) {
    ToolContext ctx{scene, store ? &*store : nullptr, rid};
    if (start.is_null()) start = now = edit_baseline(ctx).before;
    if (next >= pending.size()) {
      if (fresh) break;
      pending = suggest->run(ctx, ask).fields["candidates"];
      next = 0;
      fresh = true;
    }
    for (int stale_tries = 0; next < pending.size();) {
      const json c = pending[next++];
      if (!(c["predicted_draw_time_delta_ms"].get<double>() <= -o.min_gain_ms)) continue;
      if (fresh && !within_budget(start, c["predicted_after"], o)) continue;
      if (!fresh && ++stale_tries > kStaleTries) {
        next = pending.size();  // the list has gone stale: ask for a new one
        break;
      }
      const Tool* tool = find_tool(c["request"]["tool"].get<std::string>());
      const std::string note = fmt::format("refine step {}: {}", k, c["description"].get<std::string>()) +
                               (common.note.empty() ? "" : "; " + common.note);
      json request = c["request"]["request"];
      request["note"] = note;
      const std::vector<EditStep> edit = {{tool, normalize_request(*tool, request)}};
      std::optional<EditSession> s;
      try {
        s = apply_edits(ctx, edit);
      } catch (const Error&) {
        if (fresh) throw;
        continue;  // an earlier step took its primitives
      }
      // A fresh suggestion was measured with the same settle: anything else is a defect.
      if (fresh && s->after != c["predicted_after"])
        throw Error(Code::internal, fmt::format("refine step {}: {} gave {} where SuggestOptimizations predicted {}", k,
                                                tool->name, s->after.dump(), c["predicted_after"].dump()));
      if (!(1000 * (metric(now, "draw_time_s") - metric(s->after, "draw_time_s")) >= o.min_gain_ms) ||
          !within_budget(start, s->after, o))
        continue;
      record_edit(s->scene, edit, tool->name, note, rid, store ? &*store : nullptr, head_seen);
      if (store)
        for (auto& w : store->take_warnings()) warnings.push_back(std::move(w));
      scene = std::move(s->scene);
      rid = head_seen = scene.revision.id;
      warnings.insert(warnings.end(), s->warnings.begin(), s->warnings.end());
      steps.push_back({{"step", k}, {"revision_id", rid}, {"tool", tool->name}, {"edit_kind", c["edit_kind"]},
                       {"description", c["description"]},
                       {"draw_time_delta_ms", std::round(1000 * (metric(s->after, "draw_time_s") - metric(now, "draw_time_s")))},
                       {"after", s->after}});
      now = s->after;
      progress.update(fmt::format("step {}, draw time {:.1f} s", k, metric(now, "draw_time_s")));
      fresh = false;
      ++k;
      break;
    }
  }
  progress.finish();
  const double t0 = metric(start, "draw_time_s"), t1 = metric(now, "draw_time_s");
  std::string text = fmt::format(
      "refine: {} steps; draw time {:.3f} -> {:.3f} s ({:+.1f}%), f1 {:.3f} -> {:.3f}, f1 at 1 px {:.3f} -> {:.3f}, "
      "chamfer {:.3f} -> {:.3f} px (budget {:.3f}, {:.3f} and {:.3f} px against the ink)",
      steps.size(), t0, t1, t0 > 0 ? 100 * (t1 - t0) / t0 : 0.0, metric(start, "f1"), metric(now, "f1"),
      metric(start, "f1_1px"), metric(now, "f1_1px"), metric(start, "chamfer_px"), metric(now, "chamfer_px"),
      o.max_f1_loss, o.max_f1_1px_loss, o.max_chamfer_gain_px);
  for (const json& s : steps)
    text += fmt::format("\n  {}: {} ({:+.0f} ms)", s["step"].get<int>(), s["description"].get<std::string>(),
                        s["draw_time_delta_ms"].get<double>());
  for (const auto& w : warnings) std::fprintf(stderr, "sv-edit: warning: %s\n", w.c_str());
  const json summary = {{"ok", true}, {"tool", "refine"}, {"steps", steps}, {"before", start}, {"after", now},
                        {"revision_id", rid}, {"llm_text", text}, {"warnings", warnings}};
  // Every step is recorded by now: an output that fails still reports them (the error's details).
  const json recorded = {{"steps", steps}, {"before", start}, {"after", now}};
  if (!common.rev.empty()) {
    if (!common.output.empty()) write_after_commit(common.output, dump_scene(scene), rid, recorded);
    write_output("-", (common.json ? summary.dump() : text) + "\n");
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
    if (store && !steps.empty()) write_after_commit(common.output, dump_scene(scene), rid, recorded);
    else write_output(common.output, dump_scene(scene));
  }
  return 0;
}

}  // namespace

ShellCommand refine_command() {
  auto o = std::make_shared<RefineOptions>();
  return {"refine",
          "take the best suggestion within the fidelity budget, apply it, repeat until none saves draw time (each step "
          "a revision with its note)",
          [o](CLI::App& a) {
            a.add_option("scene", o->input, "the scene file, or - for standard input (default)");
            check_number(a.add_option("--max-f1-loss", o->max_f1_loss,
                                      "largest loss of f1 against the ink, over all steps (default 0.005)"),
                         between(0, 1));
            check_number(a.add_option("--max-f1-1px-loss", o->max_f1_1px_loss,
                                      "largest loss of f1 at 1 px against the ink, over all steps (default 0.02)"),
                         between(0, 1));
            check_number(a.add_option("--max-chamfer-gain", o->max_chamfer_gain_px,
                                      "largest growth of the chamfer distance to the ink in px, over all steps (default 0.1)"),
                         between(0, 1e6));
            check_number(a.add_option("--max-steps", o->max_steps, "at most this many edits (default 200)"),
                         between(0, 100000), true);
            check_number(a.add_option("--min-gain-ms", o->min_gain_ms, "a step saves at least this much draw time (default 50 ms)"),
                         between(0, 1e9));
          },
          [o](const CommonOptions& c) { return run_refine(*o, c); },
          opt::store | opt::rev | opt::note | opt::output | opt::json | opt::quiet};
}

}  // namespace sv
