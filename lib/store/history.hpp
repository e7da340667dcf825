// Reading and moving the store's history: the revision chain, where HEAD is, checkout and
// branches, as data (the history tools format it).
#pragma once
#include "core/scene.hpp"
#include "store/store.hpp"

namespace sv {

struct RevisionRecord {
  std::string id, parent, tool, note;
  json args;
  long long time = 0;  // when a ref first moved to it (0 if never)
  std::string problem;  // why the revision cannot be read ("" when it can)
};

// A revision's scene, or, when it cannot be read (e.g. it fails the scene schema), an empty
// scene whose revision.parent is the parent its object still names (read as plain JSON; "" when
// the object does not match its name or names none), with the reason in `problem`.
Scene read_scene_leniently(const Store& store, const std::string& id, std::string& problem);

// The chain from `id` back through parents, newest first, at most `limit` records. A revision
// that cannot be read is a record with `problem` set instead of failing the whole history; the
// chain goes on through the parent its object still names, if any.
std::vector<RevisionRecord> revision_chain(const Store& store, const std::string& id, size_t limit);

// Where HEAD is: its branch ("" when detached), its revision ("" before the first) and every
// branch. Throws Error(corrupt_object) when HEAD names an invalid branch.
struct HeadState {
  std::string branch, revision;
  std::vector<std::string> branches;
};
HeadState head_state(const Store& store);

// HEAD to a branch (symbolic) or a revision (detached); returns where it was and is.
struct HeadMove {
  std::string previous, current, branch;  // branch "" when detached
};
HeadMove checkout_head(Store& store, const std::string& rev);

// Creates branch `name` at `rev` (conflict if it exists; invalid_selection for a bad name) and,
// when `switch_head`, points HEAD at it. Returns the revision id.
std::string create_branch(Store& store, const std::string& name, const std::string& rev, bool switch_head);

std::string format_time_utc(long long t);

}  // namespace sv
