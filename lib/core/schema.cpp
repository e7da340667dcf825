#include "core/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <regex>

#include "core/messages.hpp"
#include "core/scene.hpp"

namespace sv {

extern const char* const scene_schema_text;

// Named, not anonymous: Schema::Node, which has external linkage, holds both.
namespace schema_detail {
enum class Type { object, array, string, boolean, null, integer, number, unknown };
// additionalItems / additionalProperties: absent (or true), false, or a schema.
enum class Extra { allowed, forbidden, schema };
}  // namespace schema_detail

namespace {

using nlohmann::json;
using schema_detail::Extra;
using schema_detail::Type;

Type type_named(const std::string& t) {
  static const std::map<std::string, Type, std::less<>> names = {
      {"object", Type::object}, {"array", Type::array},     {"string", Type::string}, {"boolean", Type::boolean},
      {"null", Type::null},     {"integer", Type::integer}, {"number", Type::number}};
  auto it = names.find(t);
  return it == names.end() ? Type::unknown : it->second;
}

bool has_type(const json& v, Type t) {
  switch (t) {
    case Type::object: return v.is_object();
    case Type::array: return v.is_array();
    case Type::string: return v.is_string();
    case Type::boolean: return v.is_boolean();
    case Type::null: return v.is_null();
    case Type::integer:
      if (v.is_number_integer()) return true;
      return v.is_number_float() && std::floor(v.get<double>()) == v.get<double>();
    case Type::number: return v.is_number() && std::isfinite(v.get<double>());
    case Type::unknown: return false;
  }
  return false;
}

// The patterns the schemas use, matched by hand: std::regex matches by recursion, one level per
// character, so a long enough string (a 40,000-character id) overflows the stack.
bool is_id(const std::string& v) {  // ^[a-z]_[0-9]{4,}$
  if (v.size() < 6 || v[0] < 'a' || v[0] > 'z' || v[1] != '_') return false;
  return std::all_of(v.begin() + 2, v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_sha256(const std::string& v) {  // ^[0-9a-f]{64}$
  return v.size() == 64 && std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Any other pattern goes to std::regex, on strings short enough for its recursion.
constexpr size_t kMaxRegexSubject = 256;

// Where a value sits in the document: a chain on the stack, spelled out only for an error.
struct Path {
  const Path* up;
  const std::string* key;  // null for an array index
  size_t index;
};

std::string spell(const Path* p) {
  if (!p) return "";
  return spell(p->up) + "/" + (p->key ? *p->key : std::to_string(p->index));
}

}  // namespace

// One schema object, its keywords read once.
struct Schema::Node {
  bool open = true;  // not an object (true, {}...): accepts anything
  bool has_ref = false;
  const Node* ref = nullptr;
  std::string ref_error;  // an unsupported $ref, reported when reached
  std::vector<Type> types;
  bool integer_only = false;  // types has integer and not number
  std::string type_text;  // the "type" value as written, for the message
  std::optional<json> const_value, enum_values;
  std::optional<double> minimum, maximum;
  enum class Pattern { none, id, sha256, regex } pattern = Pattern::none;
  std::string pattern_text;
  std::regex re;
  std::optional<size_t> min_items, max_items;
  const Node* items = nullptr;     // one schema for every item
  std::vector<const Node*> tuple;  // or one per position
  bool is_tuple = false;
  Extra more = Extra::allowed;
  const Node* more_node = nullptr;
  std::vector<std::string> required;
  std::map<std::string, const Node*, std::less<>> properties;
  Extra additional = Extra::allowed;
  const Node* additional_node = nullptr;
  std::vector<const Node*> any_of, one_of;
  bool has_any_of = false, has_one_of = false;
  bool plain_number = false;  // {"type": "number"} and nothing else
};

struct Compiled {
  std::deque<Schema::Node> nodes;  // stable addresses: nodes point at each other
  std::map<std::string, const Schema::Node*> definitions;
  const Schema::Node* top = nullptr;
  const json* root = nullptr;  // while compiling: where $ref finds the definitions

  const Schema::Node* compile(const json& s) {
    Schema::Node& n = nodes.emplace_back();
    if (!s.is_object()) return &n;
    n.open = false;
    if (auto r = s.find("$ref"); r != s.end()) {
      n.has_ref = true;
      const std::string ref = *r;
      const std::string prefix = "#/definitions/";
      if (ref.rfind(prefix, 0) != 0) n.ref_error = "unsupported $ref " + ref;
      else n.ref = definition(ref.substr(prefix.size()));
      return &n;  // $ref replaces the other keywords
    }
    if (auto t = s.find("type"); t != s.end()) {
      if (t->is_array())
        for (const auto& one : *t) n.types.push_back(type_named(one));
      else
        n.types.push_back(type_named(*t));
      n.type_text = fmt::format("expected {}", t->dump());
      auto has = [&](Type k) { return std::find(n.types.begin(), n.types.end(), k) != n.types.end(); };
      n.integer_only = has(Type::integer) && !has(Type::number);
    }
    if (auto c = s.find("const"); c != s.end()) n.const_value = *c;
    if (auto e = s.find("enum"); e != s.end()) n.enum_values = *e;
    if (auto m = s.find("minimum"); m != s.end()) n.minimum = m->get<double>();
    if (auto m = s.find("maximum"); m != s.end()) n.maximum = m->get<double>();
    if (auto p = s.find("pattern"); p != s.end()) {
      n.pattern_text = p->get<std::string>();
      if (n.pattern_text == "^[a-z]_[0-9]{4,}$") n.pattern = Schema::Node::Pattern::id;
      else if (n.pattern_text == "^[0-9a-f]{64}$") n.pattern = Schema::Node::Pattern::sha256;
      else n.pattern = Schema::Node::Pattern::regex, n.re = std::regex(n.pattern_text);
    }
    if (auto m = s.find("minItems"); m != s.end()) n.min_items = m->get<size_t>();
    if (auto m = s.find("maxItems"); m != s.end()) n.max_items = m->get<size_t>();
    if (auto it = s.find("items"); it != s.end()) {
      if (it->is_array()) {
        n.is_tuple = true;
        for (const auto& one : *it) n.tuple.push_back(compile(one));
        if (auto more = s.find("additionalItems"); more != s.end()) extra(*more, n.more, n.more_node);
      } else {
        n.items = compile(*it);
      }
    }
    if (auto req = s.find("required"); req != s.end())
      for (const auto& k : *req) n.required.push_back(k.get<std::string>());
    if (auto props = s.find("properties"); props != s.end())
      for (auto it = props->begin(); it != props->end(); ++it) n.properties[it.key()] = compile(it.value());
    if (auto addl = s.find("additionalProperties"); addl != s.end()) extra(*addl, n.additional, n.additional_node);
    if (auto alts = s.find("anyOf"); alts != s.end()) {
      n.has_any_of = true;
      for (const auto& alt : *alts) n.any_of.push_back(compile(alt));
    }
    if (auto alts = s.find("oneOf"); alts != s.end()) {
      n.has_one_of = true;
      for (const auto& alt : *alts) n.one_of.push_back(compile(alt));
    }
    n.plain_number = s.size() == 1 && n.types.size() == 1 && n.types[0] == Type::number;
    return &n;
  }

  void extra(const json& s, Extra& kind, const Schema::Node*& node) {
    if (s.is_boolean()) kind = s.get<bool>() ? Extra::allowed : Extra::forbidden;
    else if (s.is_object()) kind = Extra::schema, node = compile(s);
  }

  // A definition is compiled on its first $ref, so recursive definitions point at themselves.
  const Schema::Node* definition(const std::string& name) {
    if (auto it = definitions.find(name); it != definitions.end()) return it->second;
    const json& s = root->at("definitions").at(name);
    Schema::Node& slot = nodes.emplace_back();
    definitions[name] = &slot;
    slot = *compile(s);  // the copy keeps slot's address, which refs to it already hold
    return &slot;
  }

  static constexpr int kMaxDepth = 64;

  // A valid value of a plain number schema, told without a call: a scene is mostly such values.
  static bool plain(const Schema::Node& s, const json& v, int depth) {
    return s.plain_number && depth <= kMaxDepth && v.is_number() && std::isfinite(v.get<double>());
  }

  bool check(const Schema::Node& s, const json& v, const Path* path, std::string& err, int depth) const {
    auto fail = [&](const std::string& why) {
      const std::string p = spell(path);
      err = fmt::format("{}: {}", p.empty() ? "/" : p, why);
      return false;
    };
    if (depth > kMaxDepth) return fail("schema nesting too deep");
    if (s.open) return true;
    if (s.has_ref) {
      if (!s.ref) return fail(s.ref_error);
      return check(*s.ref, v, path, err, depth + 1);
    }
    if (!s.type_text.empty() &&
        std::none_of(s.types.begin(), s.types.end(), [&](Type t) { return has_type(v, t); }))
      return fail(s.type_text);
    if (s.const_value && v != *s.const_value) return fail("must be " + s.const_value->dump());
    if (s.enum_values && std::find(s.enum_values->begin(), s.enum_values->end(), v) == s.enum_values->end())
      return fail(fmt::format("must be one of {}", s.enum_values->dump()));
    if (v.is_number()) {
      double x = v.get<double>();
      if (!std::isfinite(x)) return fail("not a finite number");
      // sv reads every integer into an int: one beyond its range is refused here, not truncated
      // (or, from 1e100, undefined) where it is read.
      if (s.integer_only && (x < INT_MIN || x > INT_MAX))
        return fail(fmt::format("must be an integer from {} to {}", INT_MIN, INT_MAX));
      if (s.minimum && x < *s.minimum) return fail(fmt::format("must be >= {}", *s.minimum));
      if (s.maximum && x > *s.maximum) return fail(fmt::format("must be <= {}", *s.maximum));
    }
    if (v.is_string() && s.pattern != Schema::Node::Pattern::none) {
      const std::string& text = v.get_ref<const std::string&>();
      switch (s.pattern) {
        case Schema::Node::Pattern::id:
          if (text.size() > kMaxIdChars) return fail(fmt::format("an id of more than {} characters", kMaxIdChars));
          if (!is_id(text)) return fail("does not match " + s.pattern_text);
          break;
        case Schema::Node::Pattern::sha256:
          if (!is_sha256(text)) return fail("does not match " + s.pattern_text);
          break;
        default:
          if (text.size() > kMaxRegexSubject)
            return fail(fmt::format("longer than {} characters (pattern {})", kMaxRegexSubject, s.pattern_text));
          if (!std::regex_search(text, s.re)) return fail("does not match " + s.pattern_text);
      }
    }
    if (v.is_array()) {
      if (s.min_items && v.size() < *s.min_items) return fail(fmt::format("needs at least {} items", *s.min_items));
      if (s.max_items && v.size() > *s.max_items) return fail(fmt::format("allows at most {} items", *s.max_items));
      for (size_t i = 0; i < v.size(); ++i) {
        const Path at{path, nullptr, i};
        const Schema::Node* item = s.items;
        if (s.is_tuple) {
          // A tuple ([primitive_id, role]): one schema per position, then additionalItems.
          if (i < s.tuple.size()) item = s.tuple[i];
          else if (s.more == Extra::forbidden) return fail(fmt::format("allows at most {} items", s.tuple.size()));
          else if (s.more == Extra::schema) item = s.more_node;
        }
        if (item && !plain(*item, v[i], depth + 1) && !check(*item, v[i], &at, err, depth + 1)) return false;
      }
    }
    if (v.is_object()) {
      for (const auto& k : s.required)
        if (!v.contains(k)) return fail("missing required key '" + k + "'");
      for (auto it = v.begin(); it != v.end(); ++it) {
        const Path at{path, &it.key(), 0};
        const Schema::Node* sub = nullptr;
        if (auto p = s.properties.find(it.key()); p != s.properties.end()) sub = p->second;
        else if (s.additional == Extra::forbidden) {
          std::vector<std::string> names;
          for (const auto& [name, node] : s.properties) names.push_back(name);
          const std::string hint = did_you_mean(closest_names(it.key(), names));
          return fail("unknown key '" + it.key() + "'" + (hint.empty() ? "" : " (" + hint + ")"));
        }
        else if (s.additional == Extra::schema) sub = s.additional_node;
        if (sub && !plain(*sub, it.value(), depth + 1) && !check(*sub, it.value(), &at, err, depth + 1)) return false;
      }
    }
    if (s.has_any_of) {
      std::string last;
      bool matched = false;
      for (const Schema::Node* alt : s.any_of) {
        std::string e;
        if ((matched = check(*alt, v, path, e, depth + 1))) break;
        last = e;
      }
      if (!matched) { err = last; return false; }
    }
    if (s.has_one_of) {
      int matched = 0;
      std::string last;
      for (const Schema::Node* alt : s.one_of) {
        std::string e;
        if (check(*alt, v, path, e, depth + 1)) {
          if (++matched > 1) return fail("matches more than one alternative");
        } else {
          last = e;
        }
      }
      if (matched == 0) { err = last; return false; }
    }
    return true;
  }
};

Schema::Schema(nlohmann::json root) : root_(std::move(root)), compiled_(std::make_unique<Compiled>()) {
  compiled_->root = &root_;
  compiled_->top = compiled_->compile(root_);
  compiled_->root = nullptr;
}
Schema::~Schema() = default;
Schema::Schema(Schema&&) noexcept = default;

std::string Schema::first_error(const nlohmann::json& doc) const {
  std::string err;
  compiled_->check(*compiled_->top, doc, nullptr, err, 0);
  return err;
}

const Schema& scene_schema() {
  static const Schema schema(nlohmann::json::parse(scene_schema_text));
  return schema;
}

}  // namespace sv
