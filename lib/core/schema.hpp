// A JSON Schema (draft-07 subset) validator: type, const, enum, properties, required,
// additionalProperties, items (one schema, or one per position with additionalItems), minItems,
// maxItems, minimum, maximum, pattern, $ref to local definitions, oneOf/anyOf. Enough for the
// scene and the tool requests, with error paths.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace sv {

class Schema {
 public:
  explicit Schema(nlohmann::json root) : root_(std::move(root)) {}
  // Returns "" when `doc` is valid, else the first violation as "/path: reason".
  std::string first_error(const nlohmann::json& doc) const;
  const nlohmann::json& root() const { return root_; }

 private:
  bool check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
             std::string& err, int depth) const;
  nlohmann::json root_;
};

// The compiled-in scene schema (share/schema/scene.schema.json).
const Schema& scene_schema();

}  // namespace sv
