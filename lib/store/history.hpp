// Reading the store's history: the revision chain and the log of ref moves, as tool results.
#pragma once
#include "core/scene.hpp"
#include "store/store.hpp"

namespace sv {

struct RevisionRecord {
  std::string id, parent, tool, note;
  json args;
  long long time = 0;  // when a ref first moved to it (0 if never)
};

// The chain from `id` back through parents, newest first, at most `limit` records.
std::vector<RevisionRecord> revision_chain(const Store& store, const std::string& id, size_t limit);

// Tool results ({"ok", "tool", "llm_text", ...}) of the history commands.
json history_log(const Store& store, const std::string& rev, size_t limit);
json history_status(const Store& store);
json history_checkout(Store& store, const std::string& rev);
json history_branch(Store& store, const std::string& name, const std::string& rev);

std::string format_time_utc(long long t);

}  // namespace sv
