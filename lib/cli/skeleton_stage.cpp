#include "cli/stages.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/progress.hpp"
#include "cli/stage_util.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/messages.hpp"
#include "graph/skeletonize.hpp"
#include "raster/image.hpp"

namespace sv {

namespace {

// Above this many pixels (a phone photo) tracing takes seconds: its stages are shown.
constexpr size_t kProgressPixels = 4'000'000;

}  // namespace

Stage skeleton_stage() {
  auto settings = std::make_shared<std::vector<std::string>>();
  Stage st;
  st.name = "sv-skeleton";
  st.batch = true;
  st.summary = "Trace a line drawing image (PNG, JPEG, TIFF, BMP, WebP) into a scene's stroke graph";
  st.reads_image = true;
  st.params = &skeleton_param_table();
  st.add_options = [settings](CLI::App& app) { add_settings_option(app, *settings, "skeleton/graph"); };
  st.run = [settings](StageInput& in, Scene& out) -> json {
    SkeletonOptions opt{parse_settings(*settings)};
    refuse_known_non_image(in.bytes, in.path);
    cv::Mat gray = decode_image(in.bytes);
    std::optional<Progress> progress;
    std::function<void(const char*)> on_stage;
    if (gray.total() > kProgressPixels) {
      progress.emplace("sv-skeleton", in.quiet);
      on_stage = [&progress](const char* what) { progress->update(what); };
    }
    out = Scene{};
    out.source = Source{in.path, sha256_hex(in.bytes), gray.cols, gray.rows, 0};
    skeletonize(out, gray, opt, on_stage);
    const Graph& g = *out.graph;
    return {{"llm_text", fmt::format("skeleton: {}x{} px, stroke width {:.2f} px, {} vertices, {} edges",
                                     out.source->width, out.source->height, out.source->stroke_width_px,
                                     g.vertices.size(), g.edges.size())},
            {"vertices", g.vertices.size()},
            {"edges", g.edges.size()}};
  };
  return st;
}

}  // namespace sv
