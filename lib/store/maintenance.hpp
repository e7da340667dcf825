// Checking and collecting the store, as git's fsck and gc do for its object database.
//
// fsck: every object's content hashes to its name; every scene parses, validates and holds
// together (check_scene_invariants: unique ids, tour steps and relations naming existing
// primitives, graph edges naming existing vertices); every ref, the final mark and HEAD name an
// existing, valid revision; every revision the log names still exists. A symlink, FIFO, device or
// folder where an object, a ref, HEAD or the log should be is a problem (never followed or read).
// Temporary files of interrupted writes, anywhere in the store, are counted, never taken for
// objects; so are the objects nothing names (what gc would collect, if old enough).
//
// fsck reads the store as its readers do, while writers may be at work: the refs, HEAD and the
// log first, then the objects (an object a ref names was written before the ref moved, and is
// never collected while the log names it); what seems wrong is looked at again before it is
// reported (a ref re-read, an object read directly), so a store being written is never called
// corrupt, and a file renamed or collected while it is listed is simply not counted.
//
// gc: an object is reachable when a ref (refs/heads/*, refs/tags/final), HEAD or any entry of the
// log names it, or it is the parent of a reachable revision or the source blob of one. The log
// is append-only and never pruned, so gc only collects what nothing ever pointed at: the objects
// of interrupted or refused writes (a writer killed before its ref moved, the losers of a
// conflict) and anything planted by hand. It holds the store's lock, never removes a reachable
// object, and keeps unreachable objects younger than `expire_s` and never younger than
// kGcGraceSeconds whatever `expire_s` says (a writer stores its objects before it takes the lock
// to name them: that takes it at most the lock's 10 s wait). Views and cache entries (derived
// data: a read never needs them) go once as old, a cache entry named after an object as soon as
// its object is gone; temporary files once older than the grace. It reports the bytes it freed.
#pragma once
#include <string>
#include <unordered_set>
#include <vector>

#include "core/scene.hpp"
#include "store/store.hpp"

namespace sv {

// What gc spares whatever it is told: the longest a writer may take between storing an object
// and naming it (the store lock's wait, 10 s, and the scene's own writes), with room to spare.
constexpr double kGcGraceSeconds = 60;

struct FsckProblem {
  std::string what;     // "object", "ref", "HEAD", "log"
  std::string name;     // the object id, ref name, …
  std::string problem;  // one line
};

struct FsckReport {
  size_t objects = 0, scenes = 0, blobs = 0, refs = 0, log_entries = 0, temp_files = 0;
  size_t unreferenced = 0;  // objects nothing names (see gc): not a problem
  std::vector<FsckProblem> problems;  // anything wrong: the store is corrupt
  std::vector<std::string> warnings;  // allowed but worth knowing (a parent outside the store, a torn log line)
  bool clean() const { return problems.empty(); }
  json to_json() const;
  std::string text() const;
};

FsckReport fsck(const Store& store);

struct GcReport {
  size_t objects = 0, reachable = 0, removed = 0, kept_recent = 0, temp_removed = 0, cache_removed = 0,
         views_removed = 0;
  uintmax_t bytes_freed = 0;  // objects, temporary files, views and cache entries removed
  std::vector<std::string> removed_ids;
  json to_json() const;
  std::string text() const;
};

// Refuses (corrupt_object) when a reachable revision, a ref, HEAD or the log cannot be read: it
// would not know what is reachable, so it removes nothing.
GcReport gc(Store& store, long long expire_s = 3600);

// The ids gc keeps regardless of age (see above). Throws corrupt_object on an unreadable
// reachable revision, ref, HEAD or log.
std::unordered_set<std::string> reachable_objects(const Store& store);

}  // namespace sv
