// A tool's request as a struct its handler reads. Each field is declared once, bound to the member
// it fills and with its JSON Schema (as GDAL's AddArg(&m_var)): the catalog's request schema and
// the struct come from the same declaration, so no handler reads a field by name or relies on a
// default being filled in — the schema's default is the one default.
#pragma once
#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "tools/tool.hpp"

namespace sv {

// The `region` every tool takes (request_schema adds it to each); a request that scopes its work
// to it derives from this.
struct RegionRequest {
  json region;  // null: the whole drawing
};
// The `note` every edit and store tool takes (request_schema adds it), for one that keeps it itself.
struct NoteRequest {
  std::optional<std::string> note;
};

namespace request_detail {
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// null reads as an empty optional; a json member takes the value as it is.
template <class T>
void read_value(const json& j, T& out) {
  if constexpr (is_optional<T>::value) {
    if (j.is_null())
      out.reset();
    else
      out = j.get<typename T::value_type>();
  } else if constexpr (std::is_same_v<T, json>) {
    out = j;
  } else {
    out = j.get<T>();
  }
}
}  // namespace request_detail

template <class R>
struct RequestField {
  std::string name;
  json schema;
  std::function<void(R&, const json&)> read;
};

// `name` fills `member`; `schema` is the field's JSON Schema (tools/schema_parts.hpp), with its
// default when it has one.
template <class R, class T>
RequestField<R> field(const char* name, T R::*member, json schema) {
  return {name, std::move(schema), [member](R& r, const json& j) { request_detail::read_value(j, r.*member); }};
}

template <class R>
struct RequestFields {
  std::vector<RequestField<R>> fields;
  std::vector<std::string> required{};

  // The tool's own request schema (an object of these fields; request_schema adds the rest).
  json schema() const {
    json props = json::object();
    for (const auto& f : fields) props[f.name] = f.schema;
    json o = {{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
    if (!required.empty()) o["required"] = required;
    return o;
  }

  // The struct of a request normalize_request has validated and completed with its defaults: a
  // field it does not hold keeps the member's initial value.
  R read(const json& req) const {
    R r{};
    if constexpr (std::is_base_of_v<RegionRequest, R>)
      if (req.contains("region")) r.region = req["region"];
    if constexpr (std::is_base_of_v<NoteRequest, R>)
      if (req.contains("note")) request_detail::read_value(req["note"], r.note);
    for (const auto& f : fields) {
      if (!req.contains(f.name)) continue;
      try {
        f.read(r, req[f.name]);
      } catch (const json::exception& e) {
        throw Error(Code::internal, fmt::format("request field '{}' does not read as declared: {}", f.name, e.what()));
      }
    }
    return r;
  }
};

// A registry entry whose handler reads its request as R.
template <class R>
Tool typed_tool(int number, std::string name, std::string group, std::string summary, const RequestFields<R>& request,
                json result, ToolResult (*handler)(const ToolContext&, const R&), ToolKind kind = ToolKind::read,
                std::string executable = {}) {
  Tool t{number, std::move(name), std::move(group), std::move(summary), request.schema(), std::move(result),
         [request, handler](const ToolContext& ctx, const json& req) { return handler(ctx, request.read(req)); },
         kind, std::move(executable)};
  return t;
}

}  // namespace sv
