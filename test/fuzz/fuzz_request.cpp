// A tool request over any bytes: the first byte picks a tool of the registry, the rest is the
// request's JSON. What every tool call goes through before its handler runs is exercised —
// normalize_request (schema, unknown fields, defaults), an edit tool's batch (parse_batch) and
// the request's scope (scope_of, on an empty scene) — but no handler, so no store is touched.
// A refusal must be sv::Error; an accepted request, normalized again from its own text, must
// come out the same and still satisfy the tool's request schema.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "fuzz_check.hpp"
#include "tools/edit_session.hpp"
#include "tools/region.hpp"
#include "tools/tool.hpp"

using svfuzz::broken;
using sv::json;

namespace {

void check_normalized(const sv::Tool& tool, const json& normalized) {
  if (std::string err = sv::Schema(sv::request_schema(tool)).first_error(normalized); !err.empty())
    broken(tool.name + ": the normalized request fails the request schema: " + err);
  json again;
  try {
    again = sv::normalize_request(tool, json::parse(normalized.dump()));
  } catch (const sv::Error& e) {
    broken(tool.name + ": a normalized request is refused when normalized again: " + e.what());
  }
  if (again.dump() != normalized.dump()) broken(tool.name + ": normalizing twice changes the request");
  try {
    sv::scope_of(sv::Scene{}, normalized);
  } catch (const sv::Error&) {
    // unknown ids on an empty scene: not_found, as the contract says
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& tools = sv::registry();
  const sv::Tool& tool = tools[data[0] % tools.size()];
  json request;
  try {
    request = json::parse(reinterpret_cast<const char*>(data) + 1, reinterpret_cast<const char*>(data) + size);
  } catch (const json::exception&) {
    return 0;  // not JSON: the runner refuses it before the library sees it
  }
  try {
    if (tool.kind == sv::ToolKind::edit && request.is_array()) {
      for (const auto& step : sv::parse_batch(request)) check_normalized(*step.tool, step.request);
    } else {
      check_normalized(tool, sv::normalize_request(tool, request));
    }
  } catch (const sv::Error&) {
    // refused, as the contract allows
  }
  return 0;
}
