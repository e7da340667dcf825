// The JSON Schema validator: each keyword it supports, the first violation's path and wording
// (tools and readers print them), and $ref through local definitions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "core/scene.hpp"
#include "core/schema.hpp"

using sv::Schema;
using nlohmann::json;

namespace {
std::string err(const json& schema, const json& doc) { return Schema(schema).first_error(doc); }
}  // namespace

TEST_CASE("the validator checks types, values and their wording", "[core][schema]") {
  CHECK(err({{"type", "integer"}}, 3.0) == "");
  CHECK(err({{"type", "integer"}}, 3.5) == "/: expected \"integer\"");
  // sv holds integers in an int: a larger one, as an integer or as a whole float, is refused.
  CHECK(err({{"type", "integer"}}, 2147483647) == "");
  CHECK(err({{"type", "integer"}}, 2147483648LL) == "/: must be an integer from -2147483648 to 2147483647");
  CHECK(err({{"type", "integer"}}, 4.44444e100) == "/: must be an integer from -2147483648 to 2147483647");
  CHECK(err({{"type", {"integer", "null"}}}, -1e10) == "/: must be an integer from -2147483648 to 2147483647");
  CHECK(err({{"type", "number"}}, 4.44444e100) == "");
  CHECK(err({{"type", {"object", "null"}}}, nullptr) == "");
  CHECK(err({{"type", {"object", "null"}}}, 1) == "/: expected [\"object\",\"null\"]");
  CHECK(err({{"type", "number"}}, std::numeric_limits<double>::infinity()) == "/: expected \"number\"");
  CHECK(err({{"minimum", 0}}, std::numeric_limits<double>::infinity()) == "/: not a finite number");
  CHECK(err({{"const", "sv.scene"}}, "x") == "/: must be \"sv.scene\"");
  CHECK(err({{"enum", {"a", 2}}}, 2) == "");
  CHECK(err({{"enum", {"a", 2}}}, "b") == "/: must be one of [\"a\",2]");
  CHECK(err({{"minimum", 0.5}, {"maximum", 2}}, 0.25) == "/: must be >= 0.5");
  CHECK(err({{"minimum", 0.5}, {"maximum", 2}}, 3) == "/: must be <= 2");
  CHECK(err({{"pattern", "^[a-z]_[0-9]{4,}$"}}, "p_0001") == "");
  CHECK(err({{"pattern", "^[a-z]_[0-9]{4,}$"}}, "p_01") == "/: does not match ^[a-z]_[0-9]{4,}$");
  CHECK(err({{"pattern", "^[a-z]_[0-9]{4,}$"}}, "p_" + std::string(sv::kMaxIdChars, '1')) ==
        "/: an id of more than 64 characters");
  CHECK(err({{"pattern", "^[0-9a-f]{64}$"}}, std::string(64, 'a')) == "");
  CHECK(err({{"pattern", "^[0-9a-f]{64}$"}}, std::string(63, 'a')) == "/: does not match ^[0-9a-f]{64}$");
  CHECK(err({{"pattern", "^v[0-9]+$"}}, "v12") == "");
  CHECK(err({{"pattern", "^v[0-9]+$"}}, "w12") == "/: does not match ^v[0-9]+$");
  CHECK(err({{"pattern", "^v"}}, "v" + std::string(300, 'x')) == "/: longer than 256 characters (pattern ^v)");
  CHECK(err({{"pattern", "^v"}}, 7) == "");  // patterns apply to strings only
  CHECK(err(true, "anything") == "");
}

TEST_CASE("the validator walks arrays and objects and names the failing path", "[core][schema]") {
  const json items = {{"type", "array"}, {"minItems", 1}, {"maxItems", 3}, {"items", {{"type", "string"}}}};
  CHECK(err(items, json::array()) == "/: needs at least 1 items");
  CHECK(err(items, {"a", "b", "c", "d"}) == "/: allows at most 3 items");
  CHECK(err(items, {"a", 1}) == "/1: expected \"string\"");
  const json tuple = {{"items", {{{"type", "string"}}, {{"type", "number"}}}}, {"additionalItems", false}};
  CHECK(err(tuple, {"a", 1}) == "");
  CHECK(err(tuple, {"a", "b"}) == "/1: expected \"number\"");
  CHECK(err(tuple, {"a", 1, 2}) == "/: allows at most 2 items");
  CHECK(err({{"items", {{{"type", "string"}}}}, {"additionalItems", {{"type", "null"}}}}, {"a", nullptr, 3}) ==
        "/2: expected \"null\"");
  const json obj = {{"type", "object"},
                    {"required", {"id"}},
                    {"properties", {{"id", {{"type", "string"}}}, {"list", items}}},
                    {"additionalProperties", false}};
  CHECK(err(obj, {{"id", "x"}, {"list", {"a"}}}) == "");
  CHECK(err(obj, {{"list", {"a"}}}) == "/: missing required key 'id'");
  CHECK(err(obj, {{"id", "x"}, {"list", {"a", 2}}}) == "/list/1: expected \"string\"");
  CHECK(err(obj, {{"id", "x"}, {"extra", 1}}) == "/: unknown key 'extra'");
  CHECK(err({{"additionalProperties", {{"type", "number"}}}}, {{"a", 1}, {"b", "2"}}) == "/b: expected \"number\"");
  // Items and properties of a plain number schema are told apart without a call; what fails
  // still fails with its path and wording.
  const json numbers = {{"items", {{"type", "number"}}}};
  CHECK(err(numbers, {1, 2.5, -3}) == "");
  CHECK(err(numbers, {1, std::numeric_limits<double>::infinity()}) == "/1: expected \"number\"");
  CHECK(err(numbers, {1, "2"}) == "/1: expected \"number\"");
  CHECK(err({{"properties", {{"x", {{"type", "number"}}}}}}, {{"x", std::nan("")}}) == "/x: expected \"number\"");
}

TEST_CASE("the validator follows $ref and tells anyOf from oneOf", "[core][schema]") {
  const json s = {{"definitions",
                   {{"node", {{"type", "object"}, {"properties", {{"kids", {{"items", {{"$ref", "#/definitions/node"}}}}},
                                                                  {"v", {{"type", "integer"}}}}}}}}},
                  {"$ref", "#/definitions/node"}};
  CHECK(err(s, {{"kids", {{{"v", 1}}, {{"kids", {{{"v", 2}}}}}}}}) == "");
  CHECK(err(s, {{"kids", {{{"v", 1}}, {{"kids", {{{"v", "x"}}}}}}}}) == "/kids/1/kids/0/v: expected \"integer\"");
  CHECK(err({{"$ref", "other.json#/x"}}, 1) == "/: unsupported $ref other.json#/x");
  const json nest = {{"definitions", {{"a", {{"items", {{"$ref", "#/definitions/a"}}}}}}}, {"$ref", "#/definitions/a"}};
  json deep = 1;
  for (int i = 0; i < 40; ++i) deep = json::array({deep});
  const std::string e = err(nest, deep);  // $ref and items each count a level
  CHECK(e.find(": schema nesting too deep") != std::string::npos);
  CHECK(e.rfind("/0/0/", 0) == 0);
  const json any = {{"anyOf", {{{"type", "string"}}, {{"minimum", 0}}}}};
  CHECK(err(any, "x") == "");
  CHECK(err(any, 1) == "");
  CHECK(err(any, -1) == "/: must be >= 0");  // the last alternative's complaint
  const json one = {{"oneOf", {{{"type", "number"}}, {{"minimum", 0}}}}};
  CHECK(err(one, -1) == "");
  CHECK(err(one, 1) == "/: matches more than one alternative");
}

TEST_CASE("the scene schema accepts a written scene and names what breaks it", "[core][schema]") {
  sv::Scene s;
  json doc = sv::to_json(s, false);
  CHECK(sv::scene_schema().first_error(doc) == "");
  doc["format"] = "other";
  CHECK(sv::scene_schema().first_error(doc) == "/format: must be \"sv.scene\"");
}
