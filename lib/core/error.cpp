#include "core/error.hpp"

#include <fmt/format.h>

namespace sv {

int exit_status(Code c) {
  switch (c) {
    case Code::unsolvable_constraint:
    case Code::no_result: return 1;
    case Code::invalid_selection: return 2;
    case Code::invalid_raster:
    case Code::invalid_scene:
    case Code::unsupported_version:
    case Code::corrupt_object:
    case Code::io_error: return 3;
    case Code::not_found: return 4;
    case Code::conflict: return 5;
    case Code::internal: return 6;
  }
  return 6;
}

const char* code_name(Code c) {
  switch (c) {
    case Code::invalid_raster: return "invalid_raster";
    case Code::invalid_scene: return "invalid_scene";
    case Code::unsupported_version: return "unsupported_version";
    case Code::not_found: return "not_found";
    case Code::invalid_selection: return "invalid_selection";
    case Code::unsolvable_constraint: return "unsolvable_constraint";
    case Code::no_result: return "no_result";
    case Code::conflict: return "conflict";
    case Code::corrupt_object: return "corrupt_object";
    case Code::io_error: return "io_error";
    case Code::internal: return "internal";
  }
  return "internal";
}

namespace {

// What each code means for the caller, and what to do about it (DESIGN §4).
const char* code_meaning(Code c) {
  switch (c) {
    case Code::invalid_raster: return "the image cannot be read as a drawing";
    case Code::invalid_scene: return "the scene document is not valid against the scene schema";
    case Code::unsupported_version: return "the scene was written by a version this one cannot read";
    case Code::not_found: return "something the request names does not exist";
    case Code::invalid_selection: return "the request is not valid: fix it and call again";
    case Code::unsolvable_constraint: return "the constraints asked for cannot all hold";
    case Code::no_result: return "there is nothing to return for this input";
    case Code::conflict: return "another writer moved HEAD meanwhile: read HEAD again and redo the step";
    case Code::corrupt_object: return "a stored object fails its hash or schema (sv-commit fsck lists them)";
    case Code::io_error: return "a file could not be read or written";
    case Code::internal: return "a defect in sv: please report it with the request";
  }
  return "a defect in sv";
}

}  // namespace

nlohmann::json Error::envelope() const {
  std::string human = fmt::format("{}: {}\n{} (exit status {}).", code_name(code_), what(), code_meaning(code_),
                                  exit_status(code_));
  if (!details_.empty()) human += "\nDetails: " + details_.dump();
  return {{"ok", false},
          {"error", {{"code", code_name(code_)}, {"message", what()}, {"details", details_}}},
          {"llm_text", fmt::format("{}: {}", code_name(code_), what())},
          {"human_text", human}};
}

}  // namespace sv
