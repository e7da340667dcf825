#include "cli/stage_util.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/stages.hpp"
#include "core/error.hpp"
#include "fit/params.hpp"
#include "graph/skeletonize.hpp"
#include "route/route.hpp"

namespace sv {

std::map<std::string, int> count_by_type(const Scene& s) {
  std::map<std::string, int> n{{"line", 0}, {"arc", 0}, {"circle", 0}};
  if (s.primitives)
    for (const auto& p : *s.primitives) ++n[prim_type_name(p.shape.type)];
  return n;
}

void add_settings_option(CLI::App& app, std::vector<std::string>& settings, const char* stage) {
  // One value per occurrence (--set A=1 --set B=2): a vector option would otherwise go on taking
  // words, so `--set KEY=VALUE FILE` swallowed FILE and read standard input.
  app.add_option("--set", settings,
                 fmt::format("override a threshold, KEY=VALUE (the {}.* keys of the scene's config; --params "
                             "lists them with their limits); repeat for several",
                             stage))
      ->allow_extra_args(false);
}

}  // namespace sv
