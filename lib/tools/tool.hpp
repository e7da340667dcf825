// The tool registry: every tool of the catalog that sv implements is one entry — catalog number
// and name, group, one-line description, request schema, result schema, handler — defined right
// after its handler in its group's file; everything an agent or a person sees comes from that
// entry: the subcommands, --schema, `tools`, --help and the man-page table.
#pragma once
#include <functional>
#include <map>
#include <opencv2/core.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

class Store;

// What a tool does with its scene: reads it (inspection, diagnostics, evaluation), edits it into
// a new revision (mutation; sv-edit records it and moves HEAD), or works on the store itself
// (history; sv-commit).
enum class ToolKind { read, edit, store };

// What a handler reads: the scene it runs on and, when one is in use, the store (for other
// revisions, the source raster blob and the view cache). A store tool gets an empty scene,
// HEAD's id and always a store.
struct ToolContext {
  const Scene& scene;
  Store* store = nullptr;
  std::string revision_id;  // of `scene` (its content hash)
  std::string oracle{};     // the oracle command (--oracle, $SV_ORACLE; oracle/oracle.hpp); empty: none
  std::string store_option{};  // --store as the session was given it, for the commands a tool prints; empty: found
};

// What a handler returns; the runner wraps it into the envelope of DESIGN §4.
struct ToolResult {
  json fields = json::object();  // the typed fields of the tool's result schema
  std::string llm_text, human_text;
  std::vector<std::string> warnings;
  std::map<std::string, cv::Mat> images;  // name -> BGR picture, written as PNG by the runner
  std::string revision_id;  // the revision measured, when the request named another than the context's
  // Edit tools: the edited scene (sections the edit did not touch as they were). The runner
  // settles it — relations of `touched` primitives re-solved, the tour kept with the `touched`
  // ones placed again unless `reroute` is off, the simulation re-run — before it is recorded.
  std::optional<Scene> scene;
  std::set<std::string> touched;  // primitives whose geometry the edit changed or created
  bool reroute = true;
  bool settled = false;  // `scene` is settled already (a batch ApplyEdits ran step by step)
};

struct Tool {
  int number;              // position in the catalog (seeds/000); listings and man pages follow it
  std::string name;        // catalog spelling, e.g. "ListPrimitives"
  std::string group;       // the catalog section (DESIGN §5): inspection, diagnostics, ..., history
  std::string summary;     // one line
  json request;            // JSON Schema of the request (object; catalog field names)
  json result;             // JSON Schema of the typed result fields (object properties)
  std::function<ToolResult(const ToolContext&, const json& request)> run;
  ToolKind kind = ToolKind::read;
  std::string executable{};  // empty: the group's (registry.cpp); set only where DESIGN §5 names an exception
  std::string subcommand{};  // empty: kebab-case of name; set only where DESIGN §4 names it otherwise
  // The catalog's llm_image: the model needs to see this tool's views, not only the person
  // reviewing (sv-mcp sends them to both); elsewhere text serves a model better.
  bool views_for_model = false;
  bool asks_oracle = false;  // takes --oracle: the handler may ask ToolContext::oracle
  bool changes_nothing = false;  // a store tool that only reads the store (ListRevisions)
  // The result's `text` is a file's content (ExportDrawing inline): sv-mcp sends it once, as an
  // embedded resource, not again inside the structured content.
  bool inline_text = false;
  // Writes the file a request names (ExportDrawing's path), replacing one that is there: records
  // no revision, but is no read-only tool to an MCP host.
  bool writes_files = false;
};

// "ListPrimitives" -> "list-primitives".
std::string kebab_case(const std::string& name);

// Every registered tool, in catalog order.
const std::vector<Tool>& registry();
// By catalog name or subcommand (either spelling); nullptr if none.
const Tool* find_tool(const std::string& name);
std::vector<const Tool*> tools_of(const std::string& executable);

// The full request schema (tool fields plus the common `region`) with defaults, and the full
// result schema (the envelope plus the typed fields).
json request_schema(const Tool& t);
json result_schema(const Tool& t);
// What every tool prints when it fails (DESIGN §4): {ok: false, error: {code, message, details},
// llm_text, human_text}.
json error_envelope_schema();

// The catalog as JSON, ready to register as an agent's function-calling tools:
// {"executable", "count", "tools": [{name, description, input_schema, output_schema, ...}]}.
json tools_listing(const std::string& executable);
// A roff table of the executable's tools for its man page.
std::string man_table(const std::string& executable);

// Fills defaults, validates, and resolves nothing else: unknown fields or bad values throw
// Error(invalid_selection) naming the field.
json normalize_request(const Tool& t, json request);

// Validates the request (normalize_request), runs the tool and returns the envelope fields {ok,
// tool, llm_text, human_text, warnings, ...typed}; images stay in `result.images` for the caller
// to write. Checks the typed fields against the tool's own result schema (a mismatch is an
// internal error).
json run_tool(const Tool& t, const ToolContext& ctx, const json& request, ToolResult& result);

// Registration of each group's file (called once by registry()): each appends its entries.
void add_inspection_tools(std::vector<Tool>& out);     // inspection.cpp: GetSourceImage .. ExplainThreshold
void add_diagnostic_tools(std::vector<Tool>& out);     // diagnostics.cpp: AnalyzeGeometricFit .. CheckTopology
void add_semantic_tools(std::vector<Tool>& out);       // semantic.cpp: IdentifyVisualForms, EvaluateSemanticFidelity, IdentifyImpliedRelationships
void add_evaluation_tools(std::vector<Tool>& out);     // evaluation.cpp: EvaluateRevision, CompareRevisions, ProjectParetoPosition
void add_edit_tools(std::vector<Tool>& out);           // edit_basic.cpp: delete, add, reverse, define a region, label roles
void add_stage_edit_tools(std::vector<Tool>& out);     // edit_stage.cpp: reorder the tour, rerun a stage, simulate and apply a batch
void add_suggestion_tools(std::vector<Tool>& out);     // suggestion.cpp: SuggestOptimizations, MergeSimilarElements
void add_geometry_edit_tools(std::vector<Tool>& out);  // edit_geometry.cpp: merge, split, replace, refit, snap, relations, smooth
void add_history_tools(std::vector<Tool>& out);        // history_tools.cpp: the sv-commit tools
void add_oracle_tools(std::vector<Tool>& out);         // oracle.cpp: AskOracle
void add_reference_tools(std::vector<Tool>& out);      // reference.cpp: CompareToReference
void add_pipeline_tools(std::vector<Tool>& out);       // pipeline.cpp: TraceImage, ExportDrawing

}  // namespace sv
