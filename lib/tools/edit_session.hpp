// Applying edits: one mutation tool, or several as one atomic batch. Each edit runs on the
// scene the previous one left, settled (relations, route, simulation); any refusal aborts the
// whole batch before anything is recorded. The caller decides whether the result becomes a
// revision (a real edit) or only a report (a dry run, the catalog's SimulateEdit).
#pragma once
#include <string>
#include <vector>

#include "eval/ink_reference.hpp"
#include "tools/tool.hpp"

namespace sv {

struct EditStep {
  const Tool* tool = nullptr;
  json request;  // normalized (defaults filled)
};

struct EditSession {
  Scene scene;                          // the settled result
  json results = json::array();         // each step's typed result fields, in order
  std::vector<std::string> warnings;
  std::vector<std::string> added, removed, changed;  // primitive ids against the input scene
  json before, after;                   // the scoreboard of the input and of the result
  std::string llm_text;                 // the steps' texts, one line each
};

// The scoreboard an edit reports: draw_time_s, primitive_count, pen_up_count, precision,
// recall, f1, chamfer_px (fidelity against `reference` at the default tolerance) and f1_1px
// (at 1 px, where a shift the default tolerance forgives shows).
json edit_metrics(const Scene& s, const std::vector<Polyline>& reference);

// What every edit of one scene is measured against: the source's ink and the scoreboard before.
// Computed once when many edits of the same scene are tried (SuggestOptimizations, refine).
struct EditBaseline {
  FidelityReference reference;
  json before;
  std::vector<std::string> warnings;
};
EditBaseline edit_baseline(const ToolContext& ctx);

// Runs the steps on ctx.scene (with the store's id marks, so the ids are those the recorded edit
// gets), each step's references to ids earlier steps added resolved first. Throws the first
// step's Error (nothing is kept); in a batch of several, its message and details name the step
// (index, tool). `base`: ctx's baseline, when known.
EditSession apply_edits(const ToolContext& ctx, const std::vector<EditStep>& steps, const EditBaseline* base = nullptr);

// Parses a batch: a list of {"tool": NAME, ...fields} (or the catalog's EditSpec
// {"kind": edit_kind, "payload": {...}}); every tool must be an edit tool. A string field of
// element i may be a reference "$N.added[K]" (N < i): the K-th, from 0 in id order, of the
// primitive ids element N added; an id a batch creates cannot be known before it runs.
std::vector<EditStep> parse_batch(const json& list);

// The batch as ApplyEdits and the apply id read it: each step {"tool": NAME, ...fields}, without
// dry_run and note.
json batch_json(const std::vector<EditStep>& steps);
// The id that applies exactly this batch to exactly this revision (ApplyEdits): the revision
// id's first 12 hex digits, a dot, and 12 of the sha256 of the revision id and batch_json (its
// numbers read as doubles, however a client spells them).
// Deterministic; its revision part tells a stale id (conflict) from a batch that is not the one
// measured.
std::string apply_id(const std::string& revision_id, const std::vector<EditStep>& steps);
// The ApplyEdits request that applies the batch measured on ctx's revision: {apply_id, edits}.
json apply_request(const ToolContext& ctx, const std::vector<EditStep>& steps);
// The command line that makes that request, runnable as printed: on the store's revision (--rev
// HEAD while it is HEAD; --store as the session was given it), else on a scene on standard input.
std::string apply_command(const ToolContext& ctx, const json& apply);

// The before/after table and the id changes, as text.
std::string edit_summary(const EditSession& s);

}  // namespace sv
