// The catalog's tools as subcommands of an executable (Executable::tools in cli/shell.hpp): one
// subcommand per tool the executable serves, its options generated from the request schema,
// and `tools`, their listing. Kept apart from the shell so that an executable serving no tool
// links none: sv-fit and sv-route then start without OpenCV.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "cli/shell.hpp"

namespace sv {

class ToolShell {
 public:
  virtual ~ToolShell() = default;
  // Whether argv names one of the executable's store tools, whose failure envelope goes to
  // stdout (known before parsing, so that a usage error is reported the same way).
  virtual bool names_store_tool(int argc, char** argv) const = 0;
  // Declares the subcommands on `app`, their shared options bound to `common`.
  virtual void add_to(CLI::App& app, CommonOptions& common) = 0;
  // After parsing: runs the subcommand named, if one was (nullopt if not); sets
  // `envelope_on_stdout` for the tool it runs.
  virtual std::optional<int> run(const CommonOptions& common, bool& envelope_on_stdout) = 0;
};

// The tools of the catalog (tools/tool.hpp) that `executable` serves.
std::unique_ptr<ToolShell> catalog_tools(const std::string& executable);

// The common options of an executable's tools as a roff table, for its man page.
std::string man_common_options(const std::string& executable);

}  // namespace sv
