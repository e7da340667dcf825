// Running one registered tool from the command line: the scene from the store (--rev) or from a
// file / stdin, the request from --request / --request-file and the field options, the envelope
// on stdout, views as PNG files; an edit recorded as a revision (store) or printed (filter mode).
#pragma once
#include <string>

#include "cli/shell.hpp"
#include "session/tool_call.hpp"

namespace sv {

// Runs the invocation (the caller has parsed it); returns 0 or throws sv::Error.
int run_tool_invocation(const ToolInvocation& inv, const CommonOptions& common);

// Converts an option's text to the JSON its field schema asks for: numbers, booleans, lists as
// "a,b,c" or JSON, objects as JSON (regions also as shorthand), and for a field that may take
// several forms the first form the text reads as.
json value_from_text(const json& field_schema, const std::string& text, const std::string& field);

// The type a field's option shows in --help (e.g. "number", "[\"line\",\"arc\"]", "json").
std::string field_type_name(const json& field_schema);

}  // namespace sv
