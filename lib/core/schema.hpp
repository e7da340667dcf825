// A JSON Schema (draft-07 subset) validator: type, const, enum, properties, required,
// additionalProperties, items (one schema, or one per position with additionalItems), minItems,
// maxItems, minimum, maximum, pattern, $ref to local definitions, oneOf/anyOf. Enough for the
// scene and the tool requests, with error paths.
#pragma once
#include <nlohmann/json.hpp>
#include <memory>
#include <string>

namespace sv {

class Schema {
 public:
  // Compiles the schema once: every stage validates its input and its output, so the keywords
  // are looked up here rather than at every node of every document.
  explicit Schema(nlohmann::json root);
  ~Schema();
  Schema(Schema&&) noexcept;
  // Returns "" when `doc` is valid, else the first violation as "/path: reason".
  std::string first_error(const nlohmann::json& doc) const;
  const nlohmann::json& root() const { return root_; }

  struct Node;

 private:
  nlohmann::json root_;
  std::unique_ptr<struct Compiled> compiled_;
};

// The compiled-in scene schema (share/schema/scene.schema.json).
const Schema& scene_schema();

}  // namespace sv
