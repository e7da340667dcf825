#include "cli/tool_command.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/schema.hpp"
#include "session/output.hpp"
#include "session/tool_call.hpp"
#include "store/store.hpp"
#include "tools/region.hpp"

namespace sv {

namespace {

[[noreturn]] void usage(const std::string& why) { throw Error(Code::invalid_selection, why); }

json first_type(const json& s) {
  if (!s.contains("type")) return nullptr;
  if (!s["type"].is_array()) return s["type"];
  for (const auto& t : s["type"])
    if (t != "null") return t;
  return nullptr;
}

bool is_region_schema(const json& s) {
  return s.contains("properties") && s["properties"].contains("vertex_id") && s["properties"].contains("primitive_ids");
}

// Under the same limits as scenes (depth, string and array sizes), checked while parsing.
json parse_json_value(const std::string& text, const std::string& field) {
  return parse_json_limited(text, Code::invalid_selection, "--" + field);
}

// Prints what edit_envelope made: the envelope (dry run, store mode) and the new scene.
int run_edit(const ToolInvocation& inv, const CommonOptions& c, std::optional<Store>& store, const json& list) {
  Scene out;
  json env = edit_envelope(inv, c, store, list, out);
  const bool dry_run = env["dry_run"].get<bool>();
  if (dry_run) {
    write_output("-", env.dump() + "\n");
  } else if (!c.rev.empty()) {
    if (!c.output.empty()) write_after_commit(c.output, dump_scene(out), out.revision.id);
    write_output("-", env.dump() + "\n");
  } else if (store) {  // recorded too: a failed output says so
    if (!inv.result_file.empty()) write_after_commit(inv.result_file, env.dump() + "\n", out.revision.id);
    write_after_commit(c.output, dump_scene(out), out.revision.id);
  } else {
    if (!inv.result_file.empty()) write_output(inv.result_file, env.dump() + "\n");
    write_output(c.output, dump_scene(out));
  }
  return 0;
}

}  // namespace

int run_tool_invocation(const ToolInvocation& inv, const CommonOptions& c) {
  const Tool& tool = *inv.tool;
  if (!c.rev.empty() && inv.input_given) usage("--rev reads the scene from the store; an input file contradicts it");
  if (tool.kind == ToolKind::store && inv.input_given) usage(tool.name + " works on the store; it reads no scene file");
  if (tool.kind == ToolKind::store && !c.rev.empty())
    usage(tool.name + " names its revisions in its own fields, not with --rev");
  std::optional<Store> store = open_store(c);

  json request = json::object();
  if (!inv.request_text.empty()) request = parse_json_value(inv.request_text, "request");
  if (!inv.request_file.empty()) request = parse_json_value(read_input(inv.request_file, kMaxRequestBytes), "request-file");
  if (tool.kind == ToolKind::edit && request.is_array()) return run_edit(inv, c, store, request);
  if (!request.is_object()) usage("the request must be a JSON object");
  merge_into(request, inv.fields);
  if (tool.kind == ToolKind::edit) return run_edit(inv, c, store, json::array({request}));
  std::string text = tool_envelope(inv, c, store, request).dump() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw Error(Code::io_error, "cannot write to standard output");
  return 0;
}

json value_from_text(const json& s, const std::string& text, const std::string& field) {
  const json type = first_type(s);
  if (type == "integer" || type == "number") {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v)) usage(fmt::format("--{}: '{}' is not a number", field, text));
    if (type == "integer") {
      if (v != std::floor(v)) usage(fmt::format("--{}: '{}' is not an integer", field, text));
      // Beyond 2^53 a double no longer holds every integer (and the conversion below overflows).
      if (std::abs(v) > 9007199254740992.0) usage(fmt::format("--{}: '{}' is out of range", field, text));
      return static_cast<long long>(v);
    }
    return v;
  }
  if (type == "boolean") {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    usage(fmt::format("--{}: '{}' is not true or false", field, text));
  }
  if (type == "string") return text;
  if (type == "array") {
    if (!text.empty() && text[0] == '[') return parse_json_value(text, field);
    json out = json::array();
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      // A tuple ("items" a list of schemas) converts each position by its own schema.
      const json items = s.value("items", json::object());
      const json& item = items.is_array() ? (out.size() < items.size() ? items[out.size()] : json::object()) : items;
      if (!part.empty()) out.push_back(value_from_text(item, part, field));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (type == "object") {
    if (!text.empty() && text[0] == '{') return parse_json_value(text, field);
    if (is_region_schema(s)) return region_from_shorthand(text);
    usage(fmt::format("--{}: expects a JSON object", field));
  }
  // Several forms (a point or a parameter): the first the text reads as and that form accepts.
  for (const char* any : {"oneOf", "anyOf"})
    if (s.contains(any)) {
      for (const auto& form : s[any]) {
        try {
          json v = value_from_text(form, text, field);
          if (Schema(form).first_error(v).empty()) return v;
        } catch (const Error&) {
        }
      }
      usage(fmt::format("--{}: '{}' is none of the forms the field takes", field, text));
    }
  // Untyped (any JSON value): JSON when it parses (accept builds nothing), else the text itself.
  if (!json::accept(text)) return text;
  return parse_json_value(text, field);
}


std::string field_type_name(const json& f) {
  if (f.contains("enum")) return f["enum"].dump();
  if (f.contains("oneOf") || f.contains("anyOf")) {
    std::string out;
    for (const auto& form : f.contains("oneOf") ? f["oneOf"] : f["anyOf"])
      out += (out.empty() ? "" : " | ") + field_type_name(form);
    return out;
  }
  const json type = first_type(f);
  return type.is_string() ? type.get<std::string>() : "json";
}

}  // namespace sv
