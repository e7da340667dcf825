// Running one registered tool from the command line: the scene from the store (--rev) or from a
// file / stdin, the request from --request / --request-file and the field options, the envelope
// on stdout, views as PNG files; an edit recorded as a revision (store) or printed (filter mode).
#pragma once
#include <string>

#include "cli/shell.hpp"
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

// Runs the invocation (the caller has parsed it); returns 0 or throws sv::Error.
int run_tool_invocation(const ToolInvocation& inv, const CommonOptions& common);

// The scene a command works on: the store's revision (--rev; the store must be open) or the scene
// file `input` ("-": standard input); returns its id.
std::string read_scene_input(const std::string& input, const CommonOptions& c, std::optional<Store>& store, Scene& scene);

// Makes an applied edit a revision of `parent`: its provenance (the steps' tools and requests,
// the note) recorded, then with a store written and HEAD moved from `head_seen` (compare-and-set:
// Error(conflict) when HEAD moved), without one its id assigned after the schema check.
void record_edit(Scene& out, const std::vector<EditStep>& steps, const std::string& tool, const std::string& note,
                 const std::string& parent, Store* store, const std::string& head_seen);

// One call of the tool in store mode, as `EXE TOOL --rev HEAD --embed-images --request JSON`
// makes it (a store tool: on the store itself): the store the options name, HEAD's scene unless
// the request names other revisions, an edit recorded as a new revision. Returns the envelope
// that command prints; throws sv::Error where it fails (no store found: not_found).
json call_tool_in_store(const Tool& tool, const CommonOptions& store_options, const json& request);

// Converts an option's text to the JSON its field schema asks for: numbers, booleans, lists as
// "a,b,c" or JSON, objects as JSON (regions also as shorthand), and for a field that may take
// several forms the first form the text reads as.
json value_from_text(const json& field_schema, const std::string& text, const std::string& field);

// The type a field's option shows in --help (e.g. "number", "[\"line\",\"arc\"]", "json").
std::string field_type_name(const json& field_schema);

}  // namespace sv
