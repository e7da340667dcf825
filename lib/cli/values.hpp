// Option values as a shell user writes them, one reading for every executable: numbers checked
// against limits stated in words ("it must be positive", never a double's 309-digit maximum),
// lengths with their unit (--footprint-mm 10cm, --tolerance-px 2px, --set fit.tolerance_px=2px),
// a closed set of choices with the closest one suggested.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/messages.hpp"

namespace CLI {
class Option;  // by name only, as in cli/shell.hpp
}

namespace sv {

// What a name ending in -mm / _mm (millimetres) or -px / _px (pixels) measures; none otherwise.
enum class LengthUnit { none, mm, px };
LengthUnit length_unit_of(std::string_view name);
const char* unit_name(LengthUnit u);  // "mm", "px", ""

// The number `text` gives, in `unit`: a plain number is already in it; a millimetre length may
// end in mm, cm or in (inches), a pixel length in px, with or without a space before the unit
// ("10cm", "4 in", "2.5px"). The conversion is exact in decimal (10cm is 100, 0.1in is 2.54:
// the double nearest the decimal product). Throws Error(invalid_selection) for anything else,
// naming `what` (the option or key) and, for a wrong unit, the units it takes.
double parse_number(std::string_view text, LengthUnit unit, const std::string& what);

// The check of one number: "" when `text` reads as a number (parse_number) within `limits` (and
// whole when `integer`), with `text` rewritten to that number in plain digits (what CLI11 then
// converts); otherwise the message, "-1 is out of range: it must be positive".
std::string read_number(std::string& text, LengthUnit unit, const NumberLimits& limits, bool integer = false);

// On a declared option: its value read by read_number, the unit taken from the option's name;
// a usage error (ValidationError, "--footprint-mm: ...") otherwise. `integer` for a count.
void check_number(CLI::Option* option, const NumberLimits& limits = {}, bool integer = false);
// On an option whose text is kept (a tool's field): a length's unit converted away, the text
// left for its own conversion otherwise.
void accept_length_units(CLI::Option* option);
// One of `choices`, the closest suggested: "'tpye' is not one of type, order, none: did you
// mean type?".
void check_choice(CLI::Option* option, const std::vector<std::string>& choices);

// The limits that the checks above most often state.
inline NumberLimits positive() { return NumberLimits{0, std::numeric_limits<double>::infinity(), true}; }
inline NumberLimits at_least(double lo) { return NumberLimits{lo}; }
inline NumberLimits between(double lo, double hi) { return NumberLimits{lo, hi}; }

}  // namespace sv
