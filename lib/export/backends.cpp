#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/hash.hpp"
#include "export/export.hpp"
#include "raster/image.hpp"
#include "raster/png.hpp"
#include "render/view.hpp"
#include "store/store.hpp"

namespace sv {

namespace {

bool on(const ExportSettings& s, const std::string& flag) {
  auto it = s.find(flag);
  return it != s.end() && it->second == "true";
}

std::string setting(const ExportSettings& s, const ExportOption& o) {
  auto it = s.find(o.flag);
  return it == s.end() ? o.value : it->second;
}

// The source image for a view's underlay: the store's blob, else the file at source.path when
// its hash still matches; an empty Mat when neither is at hand.
cv::Mat source_underlay(const Scene& s, Store* store) {
  if (!s.source) return {};
  std::string bytes;
  if (store && store->has_object(s.source->sha256)) {
    bytes = store->read_object(s.source->sha256);
  } else if (!s.source->path.empty() && s.source->path != "-") {
    try {  // a regular file within the image limit only (core/file.hpp)
      bytes = read_regular_file(s.source->path, kMaxImageFileBytes, Code::invalid_raster);
    } catch (const Error&) {
      return {};
    }
    if (sha256_hex(bytes) != s.source->sha256) return {};
  } else {
    return {};
  }
  return decode_image(bytes);
}

const GcodeOptions kGcode;

// The names render's color_by takes for the same colourings.
const ExportOption kColorBy{"--color-by", "colour of the PNG view's strokes", "primitive_type",
                            {"primitive_type", "draw_order", "none"}};
const ExportOption kGcodeUnits{"--gcode-units", "G-code units: mm at the robot's scale, or px", "mm", {"mm", "px"}};
const ExportOption kGcodePenUp{"--gcode-pen-up", "G-code line that lifts the pen (e.g. \"G0 Z5\")", kGcode.pen_up, {}};
const ExportOption kGcodePenDown{"--gcode-pen-down", "G-code line that lowers the pen (e.g. \"G1 Z0 F500\")",
                                 kGcode.pen_down, {}};
const ExportOption kGcodeFeed{"--gcode-feed",
                              "G-code drawing feed rate, units per minute (written again after every pen command)",
                              fmt::format("{:g}", kGcode.feed), {}, false, true};
const ExportOption kGcodeDwell{"--gcode-dwell-s", "G-code dwell after each pen lift and drop, seconds (G4 P; 0: none)",
                               "0", {}, false, false, true};
const ExportOption kGcodeOrigin{"--gcode-origin",
                                "G-code origin: the image's corner, or the corner of the drawing's bounding box",
                                "image", {"image", "drawing"}};
const ExportOption kGcodeMargin{"--gcode-margin-mm", "G-code margin added to X and Y from the origin, mm", "0", {},
                                false, false, true};

const ExportOption kAnimateSpeed{"--animate-speed",
                                 "speed-up of the animated SVG over real time (auto: the whole drawing in about 30 s, "
                                 "never slower than real time)",
                                 "auto", {"auto"}, false, true};

ExportOption switch_option(const char* flag, const char* help) { return {flag, help, "false", {}, true}; }

std::string write_commands(const ExportInput& in, const ExportSettings&) { return doodlebot_stream_text(in.scene); }

std::string write_gcode(const ExportInput& in, const ExportSettings& s) {
  GcodeOptions g;
  g.units = setting(s, kGcodeUnits) == "px" ? GcodeOptions::Units::px : GcodeOptions::Units::mm;
  g.pen_up = setting(s, kGcodePenUp);
  g.pen_down = setting(s, kGcodePenDown);
  g.feed = std::stod(setting(s, kGcodeFeed));
  g.dwell_s = std::stod(setting(s, kGcodeDwell));
  g.origin = setting(s, kGcodeOrigin) == "drawing" ? GcodeOptions::Origin::drawing : GcodeOptions::Origin::image;
  g.margin_mm = std::stod(setting(s, kGcodeMargin));
  g.flip_y = !on(s, "--gcode-no-flip");
  return gcode(in.scene, g);
}

std::string write_view(const ExportInput& in, const ExportSettings& s) { return encode_png_rgb(export_view(in, s)); }

std::string write_svg(const ExportInput& in, const ExportSettings&) { return render_svg(in.scene); }

std::string write_animation(const ExportInput& in, const ExportSettings& s) {
  const std::string speed = setting(s, kAnimateSpeed);
  return render_svg_animated(in.scene, speed == "auto" ? kAutoSpeedup : std::stod(speed));
}

}  // namespace

cv::Mat export_view(const ExportInput& in, const ExportSettings& s) {
  ViewOptions vo;
  const std::string color_by = setting(s, kColorBy);
  vo.color_by = color_by == "draw_order" ? ColorBy::draw_order : color_by == "none" ? ColorBy::none : ColorBy::primitive_type;
  vo.pen_up = on(s, "--show-pen-up-paths");
  vo.ids = on(s, "--show-ids");
  if (!on(s, "--no-source")) vo.source = source_underlay(in.scene, in.store);
  return render_view(in.scene, vo);
}

const std::vector<ExportBackend>& export_backends() {
  static const std::vector<ExportBackend> backends = {
      {"commands", "--commands", ".json",
       "write the Doodlebot command stream {start, commands} (as the robot and the scorer read it) to this file",
       {},
       write_commands},
      {"gcode", "--gcode", ".gcode", "write the drawing as G-code for pen plotters to this file",
       {kGcodeUnits, kGcodePenUp, kGcodePenDown, kGcodeFeed, kGcodeDwell, kGcodeOrigin, kGcodeMargin,
        switch_option("--gcode-no-flip", "keep the image's y-down axis (the plot comes out mirrored)")},
       write_gcode},
      {"view", "--png", ".png", "write a view of what the robot draws (labelled grid) to this PNG file",
       {kColorBy, switch_option("--show-pen-up-paths", "draw pen-up travel, dashed, in the PNG view"),
        switch_option("--show-ids", "write primitive ids beside the primitives in the PNG view, where they overlap no other id"),
        switch_option("--no-source", "do not draw the source image under the PNG view")},
       write_view},
      {"svg", "--svg", ".svg", "write the drawing as SVG with true arcs to this file", {}, write_svg},
      {"animation", "--animate", ".svg",
       "write an animated SVG of the robot drawing it, with its heading, pen-up travel and a clock (plays in a "
       "browser; its still image is the finished drawing), to this file",
       {kAnimateSpeed},
       write_animation},
  };
  return backends;
}

}  // namespace sv
