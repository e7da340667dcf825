// Wording a person reads in error messages, shared by every executable and by sv-mcp: the
// closest names to a mistyped one ("did you mean"), a number's limits in words, and what kind
// of image a file is by its signature.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sv {

// Edit distance with adjacent transpositions (optimal string alignment: "lgo" is one step from
// "log"), letters compared case-insensitively.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidates a mistyped `word` most likely meant, best first (at most `limit`): those within
// an edit distance that grows with the word's length (1 up to 5 letters, 2 up to 8, else 3;
// leading dashes not counted), the closest ones only; when none is that close, those that begin
// with the word (at least 2 letters: "list" -> list-primitives, list-revisions). Ties in name
// order; the word itself is never suggested, nor anything for a word of one letter.
std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       size_t limit = 3);

// "did you mean log?", "did you mean a or b?", "did you mean a, b or c?"; "" for no names.
std::string did_you_mean(const std::vector<std::string>& names);

// A number as people write it: a whole number without a decimal point or exponent (up to
// 1e15), else the shortest form that reads back exactly (0.005, 1.5e+300).
std::string number_text(double v);

// A closed or open interval in words, without the 309-digit numbers of a double's limits:
// "any number", "positive", "at least 0", "greater than 2", "at most 1", "between 0 and 1"
// (both ends included), "positive and at most 1". A bound beyond 1e300 counts as none.
// `unit` follows each number ("at least 0 px").
struct NumberLimits {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;  // min itself excluded
  bool max_open = false;
};
std::string limits_text(const NumberLimits& limits, const std::string& unit = "");
bool within(double v, const NumberLimits& limits);

// The image format whose signature (magic bytes) `bytes` begins with: "PNG", "JPEG", "TIFF",
// "WebP", "BMP", "GIF"; nullopt for anything else (a scene, which is JSON, never begins so).
std::optional<std::string> image_signature(std::string_view bytes);

// Where a scene was to come from, as a message names it: the path, or "standard input" for "-".
std::string input_name(const std::string& path);

// A scene reader was given an image: invalid_scene naming the file and its format, and the
// pipeline that makes a scene of it ("sv-skeleton input.png | sv-fit"), ending with `command`
// (the reading program, with its subcommand: "sv-route", "sv-diagnose list-primitives"). Does
// nothing when `bytes` is not an image.
void refuse_image_as_scene(std::string_view bytes, const std::string& path, const std::string& command);
// The other way round, for an image reader (sv-skeleton, TraceImage): what is plainly no image
// it reads, a scene (JSON) or a GIF, is invalid_raster saying what it is. Does nothing otherwise.
void refuse_known_non_image(std::string_view bytes, const std::string& path);

}  // namespace sv
