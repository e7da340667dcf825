#include "cli/values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace sv {

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `digits` (decimal, no sign) times a small factor, in decimal.
std::string times(const std::string& digits, unsigned factor) {
  std::string out(digits.size(), '0');
  unsigned carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const unsigned v = static_cast<unsigned>(digits[i] - '0') * factor + carry;
    out[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  while (carry) {
    out.insert(out.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  return out;
}

struct UnitFactor {
  const char* unit;
  unsigned multiply;
  int shift;  // a power of ten
};

// The units a length in `u` may be written in, and how each converts to `u` exactly.
std::vector<UnitFactor> units_of(LengthUnit u) {
  switch (u) {
    case LengthUnit::mm: return {{"", 1, 0}, {"mm", 1, 0}, {"cm", 1, 1}, {"in", 254, -1}};
    case LengthUnit::px: return {{"", 1, 0}, {"px", 1, 0}};
    case LengthUnit::none: break;
  }
  return {{"", 1, 0}};
}

std::string wrong_unit(std::string_view text, const std::string& unit, LengthUnit u) {
  switch (u) {
    case LengthUnit::mm:
      return fmt::format("'{}': {} is not a unit it takes: a length in millimetres is given in mm (the default), cm or "
                         "in, as in 100, 100mm, 10cm or 4in",
                         text, unit);
    case LengthUnit::px:
      return fmt::format("'{}': {} is not a unit it takes: a length in pixels is given in px (the default), as in 2 or 2px",
                         text, unit);
    case LengthUnit::none: break;
  }
  return fmt::format("'{}' is not a number", text);
}

// Reads `text` as a number in `u` into `out`; "" or the message.
std::string parse_text(std::string_view text, LengthUnit u, double& out) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n && text[i] == ' ') ++i;
  bool negative = false;
  if (i < n && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;
  long long exponent = 0;
  size_t count = 0;
  while (i < n && is_digit(text[i])) digits += text[i++], ++count;
  if (i < n && text[i] == '.') {
    ++i;
    while (i < n && is_digit(text[i])) digits += text[i++], --exponent, ++count;
  }
  if (count == 0) return fmt::format("'{}' is not a number", text);
  if (i + 1 < n && (text[i] == 'e' || text[i] == 'E') &&
      (is_digit(text[i + 1]) || (i + 2 < n && (text[i + 1] == '+' || text[i + 1] == '-') && is_digit(text[i + 2])))) {
    ++i;
    bool minus = false;
    if (text[i] == '+' || text[i] == '-') minus = text[i++] == '-';
    long long e = 0;
    while (i < n && is_digit(text[i])) e = std::min(e * 10 + (text[i++] - '0'), 1'000'000LL);
    exponent += minus ? -e : e;
  }
  while (i < n && text[i] == ' ') ++i;
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const UnitFactor& f : units_of(u)) {
    if (unit != f.unit) continue;
    const std::string decimal = fmt::format("{}{}e{}", negative ? "-" : "", times(digits, f.multiply), exponent + f.shift);
    const double v = std::strtod(decimal.c_str(), nullptr);
    if (!std::isfinite(v)) return fmt::format("'{}' is not a finite number", text);
    out = v;
    return "";
  }
  if (u == LengthUnit::none || unit.empty() || unit.find_first_of("0123456789") != std::string::npos)
    return fmt::format("'{}' is not a number", text);
  return wrong_unit(text, unit, u);
}

}  // namespace

LengthUnit length_unit_of(std::string_view name) {
  if (ends_with(name, "-mm") || ends_with(name, "_mm")) return LengthUnit::mm;
  if (ends_with(name, "-px") || ends_with(name, "_px")) return LengthUnit::px;
  return LengthUnit::none;
}

const char* unit_name(LengthUnit u) {
  switch (u) {
    case LengthUnit::mm: return "mm";
    case LengthUnit::px: return "px";
    case LengthUnit::none: break;
  }
  return "";
}

double parse_number(std::string_view text, LengthUnit unit, const std::string& what) {
  double v = 0;
  if (std::string why = parse_text(text, unit, v); !why.empty())
    throw Error(Code::invalid_selection, fmt::format("{}: {}", what, why), {{"value", std::string(text)}});
  return v;
}

std::string read_number(std::string& text, LengthUnit unit, const NumberLimits& limits, bool integer) {
  double v = 0;
  if (std::string why = parse_text(text, unit, v); !why.empty()) return why;
  if (integer && v != std::floor(v)) return fmt::format("{} is not a whole number", text);
  if (!within(v, limits))
    return fmt::format("{} is out of range: it must be {}", text, limits_text(limits, unit_name(unit)));
  text = number_text(v);  // the shortest digits that read back as v: CLI11's conversion is exact
  return "";
}

namespace {

// The option's long name ("--footprint-mm"), which says its unit.
std::string long_name(const CLI::Option* o) {
  return o->get_lnames().empty() ? o->get_name() : "--" + o->get_lnames().front();
}

// The limits as --help and --params show them after the type, as CLI11's own checks did
// (FLOAT:POSITIVE, INT:[0, 100000]).
std::string limits_tag(const NumberLimits& l) {
  const bool has_min = l.min > -1e300, has_max = l.max < 1e300;
  if (!has_min && !has_max) return "";
  if (!has_max && l.min == 0) return l.min_open ? "POSITIVE" : "NONNEGATIVE";
  return fmt::format("{}{}, {}{}", l.min_open || !has_min ? "(" : "[", has_min ? number_text(l.min) : "-inf",
                     has_max ? number_text(l.max) : "inf", l.max_open || !has_max ? ")" : "]");
}

}  // namespace

void check_number(CLI::Option* option, const NumberLimits& limits, bool integer) {
  const LengthUnit unit = length_unit_of(long_name(option));
  option->transform(CLI::Validator(
      [unit, limits, integer](std::string& text) { return read_number(text, unit, limits, integer); },
      limits_tag(limits), "number"));
}

void accept_length_units(CLI::Option* option) {
  const LengthUnit unit = length_unit_of(long_name(option));
  if (unit == LengthUnit::none) return;
  option->transform(CLI::Validator(
      [unit](std::string& text) -> std::string {
        // A list or a JSON value is the field's own conversion's to read.
        if (text.empty() || text.find_first_of(",[{") != std::string::npos) return "";
        return read_number(text, unit, NumberLimits{});
      },
      "", "length"));
}

void check_choice(CLI::Option* option, const std::vector<std::string>& choices) {
  option->check(CLI::Validator(
      [choices](std::string& text) -> std::string {
        for (const std::string& c : choices)
          if (c == text) return "";
        std::string list;
        for (size_t i = 0; i < choices.size(); ++i) list += (i ? ", " : "") + choices[i];
        const std::string hint = did_you_mean(closest_names(text, choices));
        return fmt::format("'{}' is not one of {}{}", text, list, hint.empty() ? "" : ": " + hint);
      },
      [&] {  // as CLI11's IsMember showed them: {type,order,none}
        std::string set;
        for (const std::string& c : choices) set += (set.empty() ? "{" : ",") + c;
        return set + "}";
      }(),
      "choice"));
}

}  // namespace sv
