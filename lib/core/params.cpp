#include "core/params.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/messages.hpp"

namespace sv {

ParamSpec param_spec(const char* key, const char* unit, const char* doc, double min, double max, ParamType type) {
  ParamSpec s;
  s.key = key;
  s.unit = unit;
  s.doc = doc;
  s.min = min;
  s.max = max;
  s.type = type;
  return s;
}

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::number: return "number";
    case ParamType::integer: return "integer";
    case ParamType::flag: return "flag";
  }
  return "number";
}

const ParamSpec* ParamTable::find(const std::string& key) const {
  for (const ParamSpec& p : params)
    if (p.key == key) return &p;
  return nullptr;
}

const ParamSpec& ParamTable::at(const std::string& key) const {
  if (const ParamSpec* p = find(key)) return *p;
  throw Error(Code::internal, fmt::format("{} records '{}', which it does not declare", stage, key));
}

namespace {

// "at least 0 px", "between 0 and 1": the limits in words (core/messages.hpp).
std::string param_limits_text(const ParamSpec& p) { return limits_text(NumberLimits{p.min, p.max}, p.unit); }

// A limit or default as JSON: null when unbounded (or absent), a whole number for the integer
// and flag types.
nlohmann::ordered_json number_json(std::optional<double> v, ParamType t) {
  if (!v || !std::isfinite(*v)) return nullptr;
  if (t != ParamType::number) return static_cast<long long>(*v);
  return *v;
}

}  // namespace

void ParamTable::check(const std::map<std::string, double>& settings) const {
  for (const auto& [key, value] : settings) {
    const ParamSpec* p = find(key);
    if (!p) {
      std::vector<std::string> keys;
      for (const ParamSpec& q : params)
        if (q.set_by == "--set") keys.push_back(q.key);
      const std::string hint = did_you_mean(closest_names(key, keys));
      throw Error(Code::invalid_selection,
                  fmt::format("unknown parameter '{}'{} (see {} --params)", key, hint.empty() ? "" : ": " + hint, stage),
                  {{"key", key}});
    }
    if (p->set_by != "--set")
      throw Error(Code::invalid_selection,
                  p->set_by.empty() ? fmt::format("'{}' is derived ({}) and cannot be set: set what it is derived from", key, p->derivation)
                                    : fmt::format("'{}' is set with {} {}, not --set", key, stage, p->set_by),
                  {{"key", key}});
    const bool whole = p->type == ParamType::number || std::floor(value) == value;
    if (!std::isfinite(value) || value < p->min || value > p->max || !whole)
      throw Error(Code::invalid_selection,
                  fmt::format("{} = {} {} {}", key, number_text(value),
                              whole ? "is out of range: it must be" : "is not a whole number: it must be a whole number",
                              param_limits_text(*p)),
                  {{"key", key}, {"value", std::isfinite(value) ? json(value) : json(nullptr)},
                   {"min", number_json(p->min, p->type)}, {"max", number_json(p->max, p->type)}});
  }
}

void ParamTable::record(Scene& s, const std::string& key, double value, const std::string& from) const {
  set_config(s, key, value, from, at(key).doc);
}

nlohmann::ordered_json ParamTable::to_json() const {
  using ojson = nlohmann::ordered_json;
  ojson list = ojson::array();
  for (const ParamSpec& p : params)
    list.push_back(ojson{{"key", p.key},
                    {"type", param_type_name(p.type)},
                    {"default", number_json(p.value, p.type)},
                    {"derivation", p.derivation.empty() ? ojson(nullptr) : ojson(p.derivation)},
                    {"min", number_json(p.min, p.type)},
                    {"max", number_json(p.max, p.type)},
                    {"unit", p.unit},
                    {"doc", p.doc},
                    {"set_by", p.set_by}});
  return ojson{{"stage", stage}, {"parameters", list}};
}

}  // namespace sv
