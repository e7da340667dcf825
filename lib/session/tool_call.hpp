// One call of a registered tool, whoever makes it (a subcommand, sv-mcp): the scene read from the
// store or a file, the tool run, a read tool's views written or inlined, an edit (or an atomic
// batch) recorded as a revision by the store's one rule (Store::record); returns the envelope.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "session/options.hpp"
#include "tools/edit_session.hpp"
#include "tools/tool.hpp"

namespace sv {

struct ToolInvocation {
  const Tool* tool = nullptr;
  std::string input = "-";  // the scene file (filter mode)
  bool input_given = false;
  std::string request_text, request_file;
  std::string result_file;       // edits in filter mode: the envelope goes here
  json fields = json::object();  // from the field options (--FIELD, --FIELD.SUB)
};

// The scene a command works on: the store's revision (--rev; the store must be open) or the scene
// file `input` ("-": standard input); returns its id. An image where the scene should be is named
// as one, with the pipeline that makes its scene for `command` ("sv-diagnose list-primitives").
std::string read_scene_input(const std::string& input, const CommonOptions& c, std::optional<Store>& store, Scene& scene,
                             const std::string& command);

// Makes an applied edit a revision of `parent`: its provenance (the steps' tools and requests,
// the note) recorded, then with a store written and HEAD moved from `head_seen` (compare-and-set:
// Error(conflict) when HEAD moved), without one its id assigned after the schema check.
void record_edit(Scene& out, const std::vector<EditStep>& steps, const std::string& tool, const std::string& note,
                 const std::string& parent, Store* store, const std::string& head_seen);

// A mutation (one edit, or a list of them as one batch) on the invocation's scene: the edits run,
// then either nothing is written (dry run: not even a view into the store) or the result becomes
// a revision, left in `edited`. Returns the envelope.
json edit_envelope(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, const json& list,
                   Scene& edited);
// A read or store tool on its scene (the store's revision, or the scene file) or on the store:
// the envelope, with the views written (and inline with --embed-images).
json tool_envelope(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, json request);

// One call of the tool in store mode, as `EXE TOOL --rev HEAD --embed-images --request JSON`
// makes it (a store tool: on the store itself): the store the options name, HEAD's scene unless
// the request names other revisions, an edit recorded as a new revision. Returns the envelope
// that command prints; throws sv::Error where it fails (no store found: not_found).
json call_tool_in_store(const Tool& tool, const CommonOptions& store_options, const json& request);

// Merges fields over a request object: nested objects (filter) field by field, regions (objects
// with a "kind") as a whole.
void merge_into(json& base, const json& over);

}  // namespace sv
