// One declaration per parameter of a pipeline stage. The same table gives what --set accepts
// and refuses, the doc each config record of the scene carries, what `STAGE --params` prints,
// and what the inspection tools explain: a parameter is declared once, nowhere else.
#pragma once
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

enum class ParamType { number, integer, flag };
const char* param_type_name(ParamType t);

struct ParamSpec {
  std::string key;  // "fit.tolerance_px"
  ParamType type = ParamType::number;
  // The value when nothing derives another (none: the value is always measured).
  std::optional<double> value;
  // How the value is derived from the stroke width ("sw"), the image or other parameters, as
  // text ("max(3, sw / 2)"); empty for a constant.
  std::string derivation;
  // Provenance recorded for a derived value: "stroke_width", "image" or an earlier stage
  // ("fit"); a constant records "default" and a user's value "user".
  std::string from = "default";
  double min = 0, max = std::numeric_limits<double>::infinity();
  std::string unit;  // "px", "deg", ...; empty for a pure number
  std::string doc;   // one line; recorded with the value in the scene's config
  // How a user sets it: "--set", another option of the stage ("--ppi"), or "" (not set, derived).
  std::string set_by = "--set";
};

// A declaration with its key, unit, doc and limits; the value or derivation is filled in after.
ParamSpec param_spec(const char* key, const char* unit, const char* doc, double min = 0,
                     double max = std::numeric_limits<double>::infinity(), ParamType type = ParamType::number);

struct ParamTable {
  std::string stage;  // "sv-fit"
  std::vector<ParamSpec> params;

  const ParamSpec* find(const std::string& key) const;
  // The declaration of a key the stage records; a missing one is a defect (Error(internal)).
  const ParamSpec& at(const std::string& key) const;
  // Refuses, with Error(invalid_selection) naming the key (and its limits), a key that is not
  // declared or not set with --set, a value outside its limits, a fraction for an integer.
  void check(const std::map<std::string, double>& settings) const;
  // Records a value in scene.config with its provenance and the declaration's doc.
  void record(Scene& s, const std::string& key, double value, const std::string& from) const;
  // {"stage", "parameters": [{"key", "type", "default", "derivation", "min", "max", "unit", "doc",
  // "set_by"}...]}, in that order (what `STAGE --params` prints).
  nlohmann::ordered_json to_json() const;
};

}  // namespace sv
