#include "core/error.hpp"

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

nlohmann::json Error::envelope() const {
  return {{"ok", false},
          {"error", {{"code", code_name(code_)}, {"message", what()}, {"details", details_}}}};
}

}  // namespace sv
