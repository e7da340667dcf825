// sv-mcp: every registered tool for any agent host, over the Model Context Protocol's stdio
// transport (lib/mcp). Parses the options and serves until standard input ends.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/shell.hpp"
#include "cli/completion.hpp"
#include "cli/stage.hpp"
#include "cli/values.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"
#include "mcp/server.hpp"
#include "session/output.hpp"

int main(int argc, char** argv) {
  using namespace sv;
  CLI::App app{"Serve sv's tools over the Model Context Protocol (stdio)", "sv-mcp"};
  app.set_version_flag("--version", [] { return version_text("sv-mcp"); },
                       "print the version, the commit built from and the libraries loaded, and exit");
  CommonOptions store;
  add_common_options(app, store, opt::store | opt::oracle);  // AskOracle's oracle, as sv-diagnose's
  std::string tools = "all";
  app.add_option("--tools", tools,
                 "which tools to serve: read (inspection, diagnostics, suggestion, SimulateEdit) or all (default)")
      ->type_name("read|all");
  check_choice(app.get_option("--tools"), {"read", "all"});
  std::string images = "model";
  app.add_option("--images", images,
                 "which views a reply carries as images: model (default: those the model needs, each at most "
                 "64 KB, scaled down to fit), all (every view, whole) or none; every view's file is in the store")
      ->type_name("model|all|none");
  check_choice(app.get_option("--images"), {"model", "all", "none"});
  app.add_flag_callback("--params",
                        [&app] {
                          write_output("-", commands_params_json(app, "sv-mcp").dump(2) + "\n");
                          throw CLI::Success();
                        },
                        "print the options as JSON and exit");
  if (wants_completion(argc, argv)) return print_completion(app, argc, argv);
  return guarded("sv-mcp", false, [&]() -> int {
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      throw_usage_error(app, e, argc, argv);
    }
    store.embed_images = images != "none";
    store.embed_model_views_only = images == "model";
    store.embed_max_bytes = images == "model" ? mcp::kMaxInlineImageBytes : 0;
    mcp::Stdio io = mcp::take_stdio();
    mcp::Server server(store, tools == "read" ? mcp::Tier::read : mcp::Tier::all);
    return mcp::serve(server, io.in, io.out);
  });
}
