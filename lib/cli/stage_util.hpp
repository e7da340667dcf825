// Helpers shared by the stage entries.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace CLI {
class App;  // by name only, as in cli/shell.hpp
}

namespace sv {

std::map<std::string, int> count_by_type(const Scene& s);
// --set KEY=VALUE, repeatable: user overrides of the stage's thresholds.
void add_settings_option(CLI::App& app, std::vector<std::string>& settings, const char* stage);

}  // namespace sv
