#include "cli/stages.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "cli/stage_util.hpp"
#include "core/error.hpp"
#include "fit/fit.hpp"

namespace sv {

Stage fit_stage() {
  auto settings = std::make_shared<std::vector<std::string>>();
  auto fast = std::make_shared<bool>(false);
  Stage st;
  st.name = "sv-fit";
  st.batch = true;
  st.params = &fit_param_table();
  st.summary = "Fit each stroke of the graph with the fewest lines, arcs and circles";
  st.add_options = [settings, fast](CLI::App& app) {
    add_settings_option(app, *settings, "fit");
    app.add_flag("--fast", *fast,
                 "after the faithful fit, merge runs of primitives into one line or arc wherever it stays within half "
                 "the stroke width of the ink's centreline and the robot draws it faster; sv-route then redraws "
                 "within that distance too (--set keys still win)");
  };
  st.run = [settings, fast](StageInput&, Scene& out) -> json {
    if (!out.graph) throw Error(Code::invalid_scene, "the scene has no graph (run sv-skeleton first)");
    drop_downstream_of_fit(out);
    FitOptions opt{*fast ? fast_overrides() : std::map<std::string, double>{}};
    for (const auto& [k, v] : parse_settings(*settings)) opt.overrides[k] = v;
    fit(out, opt);
    auto n = count_by_type(out);
    double worst = 0;
    for (const auto& p : *out.primitives) worst = std::max(worst, p.fit_max_px);
    // Candidate relations that did not hold are a normal outcome: counted here, each kept with
    // its reason in the scene's relations.
    size_t dropped = 0;
    for (const json& r : out.relations) dropped += r.value("status", "") == "dropped";
    const size_t enforced = out.relations.size() - dropped;
    return {{"llm_text", fmt::format("fit: {} primitives ({} line, {} arc, {} circle), worst deviation {:.2f} px; "
                                     "relations: {} enforced, {} dropped",
                                     out.primitives->size(), n["line"], n["arc"], n["circle"], worst, enforced, dropped)},
            {"primitive_count", out.primitives->size()},
            {"by_type", n},
            {"relations", {{"enforced", enforced}, {"dropped", dropped}}}};
  };
  return st;
}

}  // namespace sv
