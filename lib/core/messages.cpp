#include "core/messages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace sv {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view without_dashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

bool equal_ci(std::string_view a, std::string_view b) { return a.size() == b.size() && starts_with_ci(a, b); }

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows: the one two back is what a transposition steps from.
  std::vector<size_t> two(m + 1), one(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) one[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[m];
}

std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string>& candidates, size_t limit) {
  const std::string_view bare = without_dashes(word);
  if (bare.size() < 2) return {};  // one letter (-x) is a step from every other: no guess
  const size_t threshold = bare.size() <= 5 ? 1 : bare.size() <= 8 ? 2 : 3;
  std::vector<std::pair<size_t, std::string>> near, prefixed;
  for (const std::string& c : candidates) {
    const std::string_view cbare = without_dashes(c);
    if (equal_ci(c, word) || cbare.empty()) continue;
    // The distance is at least the difference of the lengths: a hostile 4 MB key costs nothing.
    const size_t gap = bare.size() > cbare.size() ? bare.size() - cbare.size() : cbare.size() - bare.size();
    const size_t d = gap <= threshold ? edit_distance(bare, cbare) : gap;
    if (d <= threshold) near.emplace_back(d, c);
    else if (bare.size() >= 2 && starts_with_ci(cbare, bare)) prefixed.emplace_back(cbare.size(), c);
  }
  std::vector<std::pair<size_t, std::string>>& pick = near.empty() ? prefixed : near;
  std::sort(pick.begin(), pick.end());
  pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
  std::vector<std::string> out;
  for (const auto& [d, name] : pick) {
    if (!near.empty() && d != pick.front().first) break;  // the closest only
    if (out.size() == limit) break;
    out.push_back(name);
  }
  return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string out = "did you mean " + names[0];
  for (size_t i = 1; i < names.size(); ++i) out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return out + "?";
}

std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

namespace {

constexpr double kNoBound = 1e300;

}  // namespace

bool within(double v, const NumberLimits& l) {
  if (std::isnan(v)) return false;
  if (l.min_open ? !(v > l.min) : !(v >= l.min)) return false;
  if (l.max_open ? !(v < l.max) : !(v <= l.max)) return false;
  return true;
}

std::string limits_text(const NumberLimits& l, const std::string& unit) {
  const bool has_min = l.min > -kNoBound, has_max = l.max < kNoBound;
  const std::string u = unit.empty() ? "" : " " + unit;
  auto low = [&] {
    return l.min_open ? (l.min == 0 ? std::string("positive") : "greater than " + number_text(l.min) + u)
                      : "at least " + number_text(l.min) + u;
  };
  auto high = [&] {
    return l.max_open ? (l.max == 0 ? std::string("negative") : "less than " + number_text(l.max) + u)
                      : "at most " + number_text(l.max) + u;
  };
  if (!has_min && !has_max) return "any number";
  if (!has_max) return low();
  if (!has_min) return high();
  if (!l.min_open && !l.max_open) return fmt::format("between {} and {}{}", number_text(l.min), number_text(l.max), u);
  return low() + " and " + high();
}

std::optional<std::string> image_signature(std::string_view b) {
  auto at = [&](size_t pos, std::string_view magic) {
    return b.size() >= pos + magic.size() && b.substr(pos, magic.size()) == magic;
  };
  using namespace std::string_view_literals;
  if (at(0, "\x89PNG\r\n\x1a\n"sv)) return "PNG";
  if (at(0, "\xFF\xD8\xFF"sv)) return "JPEG";
  if (at(0, "II*\0"sv) || at(0, "MM\0*"sv)) return "TIFF";
  if (at(0, "RIFF"sv) && at(8, "WEBP"sv)) return "WebP";
  if (at(0, "GIF87a"sv) || at(0, "GIF89a"sv)) return "GIF";
  if (at(0, "BM"sv)) return "BMP";
  return std::nullopt;
}

std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

namespace {

// A path as the shell takes it: quoted when it holds anything but the usual file-name letters.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+,:@") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void refuse_image_as_scene(std::string_view bytes, const std::string& path, const std::string& command) {
  const std::optional<std::string> format = image_signature(bytes);
  if (!format) return;
  std::string pipeline = "sv-skeleton " + (path == "-" ? std::string("IMAGE") : shell_word(path));
  const bool stage = command == "sv-fit" || command == "sv-route" || command == "sv-simulate";
  for (const char* s : {"sv-fit", "sv-route", "sv-simulate"}) {
    if (stage && command == s) break;
    if (!stage && std::string(s) == "sv-simulate") break;
    pipeline += std::string(" | ") + s;
  }
  pipeline += " | " + command;
  throw Error(Code::invalid_scene,
              fmt::format("{} is a {} image, not a scene: run sv-skeleton on it first ({})", input_name(path), *format,
                          pipeline),
              {{"format", *format}});
}

void refuse_known_non_image(std::string_view bytes, const std::string& path) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  const std::string name = input_name(path);
  if (first != std::string::npos && bytes[first] == '{')
    throw Error(Code::invalid_raster, fmt::format("{} is JSON (a scene?), not an image: sv-skeleton reads PNG, JPEG, "
                                                  "TIFF, BMP or WebP; a scene goes to sv-fit, sv-route or sv-simulate",
                                                  name));
  if (image_signature(bytes) == std::optional<std::string>("GIF"))
    throw Error(Code::invalid_raster,
                fmt::format("{} is a GIF image: sv-skeleton reads PNG, JPEG, TIFF, BMP or WebP (convert it first)", name));
}

}  // namespace sv
