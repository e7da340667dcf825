// The history commands' results as tool envelopes ({"ok", "tool", "llm_text", ...}): sv-commit's
// log, status and branch subcommands print them; Checkout and BranchRevision build on them.
#pragma once
#include <string>

#include "core/scene.hpp"

namespace sv {

class Store;

// The chain from `rev` back through parents, newest first (at most `limit`); unreadable
// revisions are listed with their problem and a warning.
json history_log(const Store& store, const std::string& rev, size_t limit);
// HEAD's branch and revision, and every branch.
json history_status(const Store& store);
// HEAD to a branch (symbolic) or a revision (detached): previous and current revision, branch.
json history_checkout(Store& store, const std::string& rev);
// Creates branch `name` at `rev` (conflict if it exists; invalid_selection for a bad name) and,
// when `switch_head`, points HEAD at it.
json history_branch(Store& store, const std::string& name, const std::string& rev, bool switch_head = false);

}  // namespace sv
