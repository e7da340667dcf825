#include "core/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "core/scene.hpp"

namespace sv {

extern const char* const scene_schema_text;

namespace {

bool has_type(const nlohmann::json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "integer") {
    if (v.is_number_integer()) return true;
    return v.is_number_float() && std::floor(v.get<double>()) == v.get<double>();
  }
  if (t == "number") return v.is_number() && std::isfinite(v.get<double>());
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

}  // namespace

std::string Schema::first_error(const nlohmann::json& doc) const {
  std::string err;
  check(root_, doc, "", err, 0);
  return err;
}

bool Schema::check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
                   std::string& err, int depth) const {
  auto fail = [&](const std::string& why) {
    err = fmt::format("{}: {}", path.empty() ? "/" : path, why);
    return false;
  };
  if (depth > 64) return fail("schema nesting too deep");
  if (!s.is_object()) return true;
  if (auto r = s.find("$ref"); r != s.end()) {
    const std::string ref = *r;
    const std::string prefix = "#/definitions/";
    if (ref.rfind(prefix, 0) != 0) return fail("unsupported $ref " + ref);
    return check(root_.at("definitions").at(ref.substr(prefix.size())), v, path, err, depth + 1);
  }
  if (auto t = s.find("type"); t != s.end()) {
    bool ok = false;
    if (t->is_array()) {
      for (const auto& one : *t) ok = ok || has_type(v, one);
    } else {
      ok = has_type(v, *t);
    }
    if (!ok) return fail(fmt::format("expected {}", t->dump()));
  }
  if (auto c = s.find("const"); c != s.end() && v != *c) return fail("must be " + c->dump());
  if (auto e = s.find("enum"); e != s.end()) {
    bool found = false;
    for (const auto& one : *e) found = found || one == v;
    if (!found) return fail(fmt::format("must be one of {}", e->dump()));
  }
  if (v.is_number()) {
    double x = v.get<double>();
    if (!std::isfinite(x)) return fail("not a finite number");
    if (auto m = s.find("minimum"); m != s.end() && x < m->get<double>())
      return fail(fmt::format("must be >= {}", m->get<double>()));
    if (auto m = s.find("maximum"); m != s.end() && x > m->get<double>())
      return fail(fmt::format("must be <= {}", m->get<double>()));
  }
  if (v.is_string()) {
    if (auto p = s.find("pattern"); p != s.end()) {
      const std::string& pattern = p->get_ref<const std::string&>();
      const std::string& text = v.get_ref<const std::string&>();
      if (pattern == "^[a-z]_[0-9]{4,}$") {
        if (text.size() > kMaxIdChars) return fail(fmt::format("an id of more than {} characters", kMaxIdChars));
        if (!is_id(text)) return fail("does not match " + pattern);
      } else if (pattern == "^[0-9a-f]{64}$") {
        if (!is_sha256(text)) return fail("does not match " + pattern);
      } else {
        if (text.size() > kMaxRegexSubject)
          return fail(fmt::format("longer than {} characters (pattern {})", kMaxRegexSubject, pattern));
        // Compiled patterns are cached: a scene validates thousands of strings.
        static thread_local std::map<std::string, std::regex> cache;
        auto [re, fresh] = cache.try_emplace(pattern);
        if (fresh) re->second = std::regex(pattern);
        if (!std::regex_search(text, re->second)) return fail("does not match " + pattern);
      }
    }
  }
  if (v.is_array()) {
    if (auto m = s.find("minItems"); m != s.end() && v.size() < m->get<size_t>())
      return fail(fmt::format("needs at least {} items", m->get<size_t>()));
    if (auto m = s.find("maxItems"); m != s.end() && v.size() > m->get<size_t>())
      return fail(fmt::format("allows at most {} items", m->get<size_t>()));
    if (auto it = s.find("items"); it != s.end() && it->is_array()) {
      // A tuple ([primitive_id, role]): one schema per position, then additionalItems.
      const auto more = s.find("additionalItems");
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string sub = fmt::format("{}/{}", path, i);
        if (i < it->size()) {
          if (!check((*it)[i], v[i], sub, err, depth + 1)) return false;
        } else if (more != s.end()) {
          if (more->is_boolean() && !more->get<bool>()) return fail(fmt::format("allows at most {} items", it->size()));
          if (more->is_object() && !check(*more, v[i], sub, err, depth + 1)) return false;
        }
      }
    } else if (it != s.end()) {
      for (size_t i = 0; i < v.size(); ++i)
        if (!check(*it, v[i], fmt::format("{}/{}", path, i), err, depth + 1)) return false;
    }
  }
  if (v.is_object()) {
    if (auto req = s.find("required"); req != s.end()) {
      for (const auto& k : *req)
        if (!v.contains(k.get<std::string>())) return fail("missing required key '" + k.get<std::string>() + "'");
    }
    const auto props = s.find("properties");
    const auto addl = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string sub = path + "/" + it.key();
      if (props != s.end() && props->contains(it.key())) {
        if (!check((*props)[it.key()], it.value(), sub, err, depth + 1)) return false;
      } else if (addl != s.end()) {
        if (addl->is_boolean() && !addl->get<bool>()) return fail("unknown key '" + it.key() + "'");
        if (addl->is_object() && !check(*addl, it.value(), sub, err, depth + 1)) return false;
      }
    }
  }
  for (const char* kw : {"anyOf", "oneOf"}) {
    if (auto alts = s.find(kw); alts != s.end()) {
      int matched = 0;
      std::string last;
      for (const auto& alt : *alts) {
        std::string e;
        if (check(alt, v, path, e, depth + 1)) ++matched;
        else last = e;
      }
      if (matched == 0) { err = last; return false; }
      if (std::string(kw) == "oneOf" && matched > 1) return fail("matches more than one alternative");
    }
  }
  return true;
}

const Schema& scene_schema() {
  static const Schema schema(nlohmann::json::parse(scene_schema_text));
  return schema;
}

}  // namespace sv
