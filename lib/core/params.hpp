// One declaration per parameter of a pipeline stage. The same table gives what --set accepts
// and refuses, the doc each config record of the scene carries, what `STAGE --params` prints,
// and what the inspection tools explain: a parameter is declared once, nowhere else.
#pragma once
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
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

// A declaration bound to the member of P it sets, so that a stage reads its parameters as
// members (a misspelt one does not compile) and resolves them all one way (ParamResolver). B is
// what the stage derives values from: the stroke width, the scene an earlier stage wrote.
template <class P, class B>
struct Param {
  // The derived value, from the basis and the members declared before it, in the units the
  // user and the scene use; none where the rule does not apply (the stroke width unknown).
  using Derive = std::function<std::optional<double>(const B&, const P&)>;
  // Where the rule does not apply, the value in place of the declared default (recorded as
  // "default" all the same): a bound that follows another parameter.
  using Otherwise = std::function<double(const P&)>;

  Param(ParamSpec s, double P::*f, Derive d = nullptr, Otherwise o = nullptr)
      : spec(std::move(s)), field(f), derive(std::move(d)), otherwise(std::move(o)) {}

  ParamSpec spec;
  double P::*field;
  Derive derive;
  Otherwise otherwise;
};

template <class P, class B>
class ParamSet {
 public:
  // Units the user and the scene use per unit the stage works in, for a declaration: the
  // skeleton works at its traced resolution while px values are the drawing's. Null: the same.
  using Units = double (*)(const ParamSpec&, const B&);

  ParamSet(std::string stage, std::vector<Param<P, B>> params, Units units = nullptr)
      : params_(std::move(params)), units_(units) {
    table_.stage = std::move(stage);
    for (const Param<P, B>& p : params_) table_.params.push_back(p.spec);
  }

  const ParamTable& table() const { return table_; }
  const std::vector<Param<P, B>>& params() const { return params_; }
  // The declaration bound to a member; an unbound one is a defect (Error(internal)).
  const Param<P, B>& at(double P::*field) const {
    for (const Param<P, B>& p : params_)
      if (p.field == field) return p;
    throw Error(Code::internal, table_.stage + " reads a parameter it does not declare");
  }
  double units(const ParamSpec& s, const B& b) const { return units_ ? units_(s, b) : 1.0; }

  // The values a scene's config records (the scene's units), each one it lacks kept as in `p`:
  // the one reading of a stage's parameters once it ran.
  P read(const Scene& s, P p) const {
    for (const Param<P, B>& q : params_) p.*q.field = config_value(s, q.spec.key, p.*q.field);
    return p;
  }

 private:
  ParamTable table_;
  std::vector<Param<P, B>> params_;
  Units units_ = nullptr;
};

// One run's resolution of a stage's parameters: the user's value (--set) wins, else the value
// its rule derives, else its declared default; each is recorded in the scene's config (when
// one is given) with its provenance and doc. Values in P are in the stage's working units.
template <class P, class B>
class ParamResolver {
 public:
  // Refuses, as ParamTable::check does, an unknown key, one not set with --set, a value out of
  // its limits or a fraction for an integer (Error(invalid_selection)).
  ParamResolver(const ParamSet<P, B>& set, std::map<std::string, double> overrides, Scene* record = nullptr)
      : set_(set), overrides_(std::move(overrides)), record_(record) {
    set_.table().check(overrides_);
  }

  double resolve(double P::*field, const B& b, P& p) {
    const Param<P, B>& q = set_.at(field);
    const double u = set_.units(q.spec, b);
    if (auto it = overrides_.find(q.spec.key); it != overrides_.end()) return keep(q, p, it->second / u, it->second, "user");
    if (q.derive)
      if (std::optional<double> v = q.derive(b, p)) return keep(q, p, *v / u, *v / u * u, q.spec.from);
    const double v = (q.otherwise ? q.otherwise(p) : q.spec.value ? *q.spec.value : p.*field) / u;
    return keep(q, p, v, v * u, "default");
  }

  // A value the stage found itself (measured on the image, set by another of its options), in
  // working units, recorded with `from` (the declaration's when empty); a user's value wins.
  double set(double P::*field, double value, const B& b, P& p, const std::string& from = "") {
    const Param<P, B>& q = set_.at(field);
    const double u = set_.units(q.spec, b);
    if (auto it = overrides_.find(q.spec.key); it != overrides_.end()) return keep(q, p, it->second / u, it->second, "user");
    return keep(q, p, value, value * u, from.empty() ? q.spec.from : from);
  }

  // The user's value in working units, if given.
  std::optional<double> user(double P::*field, const B& b) const {
    const Param<P, B>& q = set_.at(field);
    auto it = overrides_.find(q.spec.key);
    if (it == overrides_.end()) return std::nullopt;
    return it->second / set_.units(q.spec, b);
  }

  // Every declaration --set sets, in declaration order (a rule reads the members before it).
  void resolve_all(const B& b, P& p) {
    for (const Param<P, B>& q : set_.params())
      if (q.spec.set_by == "--set") resolve(q.field, b, p);
  }

  // The provenance a member was resolved with ("" before).
  std::string from(double P::*field) const {
    auto it = from_.find(set_.at(field).spec.key);
    return it == from_.end() ? std::string() : it->second;
  }

 private:
  double keep(const Param<P, B>& q, P& p, double value, double recorded, const std::string& from) {
    p.*q.field = value;
    from_[q.spec.key] = from;
    if (record_) set_config(*record_, q.spec.key, recorded, from, q.spec.doc);
    return value;
  }

  const ParamSet<P, B>& set_;
  std::map<std::string, double> overrides_;
  Scene* record_;
  std::map<std::string, std::string> from_;
};

}  // namespace sv
