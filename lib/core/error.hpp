// The error contract: a closed vocabulary of codes, each with its exit status.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace sv {

enum class Code {
  invalid_raster,
  invalid_scene,
  unsupported_version,
  not_found,
  invalid_selection,
  unsolvable_constraint,
  no_result,
  conflict,
  corrupt_object,
  io_error,
  internal,
};

// Exit statuses: 0 success, 1 refused, 2 usage, 3 bad input, 4 not found,
// 5 conflict, 6 internal.
int exit_status(Code c);
const char* code_name(Code c);

class Error : public std::runtime_error {
 public:
  Error(Code code, std::string message, nlohmann::json details = nlohmann::json::object())
      : std::runtime_error(std::move(message)), code_(code), details_(std::move(details)) {}
  Code code() const { return code_; }
  const nlohmann::json& details() const { return details_; }
  // {"ok": false, "error": {"code", "message", "details"}}
  nlohmann::json envelope() const;

 private:
  Code code_;
  nlohmann::json details_;
};

}  // namespace sv
