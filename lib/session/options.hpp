// What a session works with, whoever drives it — the command line (cli/shell.hpp declares these
// as options) or sv-mcp: the store, the revision, a note, where outputs and views go.
#pragma once
#include <optional>
#include <string>

#include "store/store.hpp"

namespace sv {

struct CommonOptions {
  std::optional<std::string> store;  // --store DIR
  bool no_store = false;             // --no-store
  std::string rev;                   // --rev REV
  std::string note;                  // --note TEXT
  std::string output;                // -o, --output FILE
  std::string png;                   // --png FILE
  bool embed_images = false;         // --embed-images
  // sv-mcp's --images: only the views a tool's model needs (Tool::views_for_model) go inline,
  // each scaled down until its PNG fits embed_max_bytes (0: no limit).
  bool embed_model_views_only = false;
  size_t embed_max_bytes = 0;
  bool json = false;                 // --json
  std::string oracle;                // --oracle CMD (default $SV_ORACLE)
  bool quiet = false;                // -q, --quiet
};

// The store the options name (--store, else $SV_STORE, else the nearest .svrev upward), none
// with --no-store. --rev without a store, or with --no-store, is refused.
std::optional<Store> open_store(const CommonOptions& o);

}  // namespace sv
