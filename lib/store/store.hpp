// The revision store (.svrev/), modelled on git's loose objects: objects/ab/cdef… holds a
// scene (its canonical bytes, revision.id left out) or a blob (the source image), each named by
// the SHA-256 of its content; refs/heads/NAME holds branch tips; HEAD names a branch
// ("ref: refs/heads/NAME") or a revision; logs/HEAD records every ref move.
//
// Writes are atomic (temporary file, fsync, rename); an object is verified against its name
// when read; ref updates hold an flock on .svrev/lock (released by the kernel if a writer
// dies) and move a ref only from the value the writer saw, else Code::conflict.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scene.hpp"

namespace sv {

namespace fs = std::filesystem;

struct LogEntry {
  std::string old_id, new_id;  // "" for none
  long long time = 0;          // seconds since the epoch
  std::string ref;             // the ref that moved, e.g. "refs/heads/main" or "HEAD"
  std::string message;
};

class Store {
 public:
  // Finds the store as git finds .git: `flag` (--store), else $SV_STORE, else the nearest
  // .svrev from the working directory upward. A flag or variable naming a directory that
  // holds .svrev means that .svrev.
  static std::optional<fs::path> locate(const std::optional<std::string>& flag);
  // Creates DIR/.svrev (or DIR itself when it is named *.svrev) with an unborn branch main.
  static Store init(const fs::path& dir);
  explicit Store(fs::path root);  // root is the .svrev directory; checks its layout

  const fs::path& root() const { return root_; }

  std::string put_blob(std::string_view bytes);
  // Assigns scene.revision.id and stores the scene; returns the id. A scene that fails the scene
  // schema or its invariants (check_scene_invariants) is refused with invalid_scene and nothing
  // is written: every stored revision can be read back. The store's id marks are raised to the
  // scene's first.
  std::string put_scene(Scene& scene);
  bool has_object(const std::string& id) const;
  std::string read_object(const std::string& id) const;  // verified; corrupt_object if not
  Scene read_scene(const std::string& id) const;
  std::vector<std::string> object_ids() const;

  // HEAD, a branch name, refs/heads/NAME, final (refs/tags/final), a full id or a unique prefix
  // (>= 4 hex digits).
  std::string resolve(const std::string& rev) const;
  // The revision HEAD names ("" while the branch is unborn) and the branch ("" if detached).
  std::string head_id() const;
  std::string head_branch() const;
  std::vector<std::string> branches() const;
  std::string branch_id(const std::string& name) const;  // "" if absent

  // Moves HEAD (its branch when HEAD is symbolic) to `id`, provided it still names
  // `expected`; `why` goes to the log.
  void advance_head(const std::string& expected, const std::string& id, const std::string& why);
  // Points HEAD at a branch (symbolic) or detaches it at a revision.
  void checkout(const std::string& rev, const std::string& why);
  // Creates or moves a branch to `id` (only from `expected` when that is given; "" means the
  // branch must not exist yet, else conflict). Invalid names are invalid_selection.
  void set_branch(const std::string& name, const std::string& id,
                  const std::optional<std::string>& expected, const std::string& why);
  // Moves HEAD (its branch when symbolic) back or over to `id`, provided it still names
  // `expected`. When `backup` is given and HEAD named another revision, that revision first gets
  // branch `backup` (or backup-2, …) so nothing becomes unreachable; returns the name used
  // ("" when none was needed). One lock, one log entry per ref moved.
  std::string reset_head(const std::string& expected, const std::string& id, const std::string& backup,
                         const std::string& why);
  // refs/tags/final: the revision a session marked as its answer ("" if none).
  std::string final_id() const;
  void mark_final(const std::string& id, const std::string& why);
  // The log's entries, oldest first; a line that does not parse (a writer killed mid-line) is
  // skipped and counted in `torn`.
  std::vector<LogEntry> log(size_t* torn = nullptr) const;

  // Every ref under refs/ ("refs/heads/main", "refs/tags/final", …) with its raw value, sorted;
  // temporary files are skipped.
  std::vector<std::pair<std::string, std::string>> refs() const;
  std::string head_text() const;  // HEAD's raw content ("ref: refs/heads/NAME" or an id)

  // The highest id number of `kind` ("primitive" or "region") any scene ever stored here has
  // used, on any branch (.svrev/id_marks, raised by put_scene under the lock; derived from the
  // stored scenes when the file is missing). A scene's own marks go back with a revert; these do
  // not, so an edit seeded with them never hands out an id the history has used.
  int id_mark(const std::string& kind) const;

  // .svrev/cache/NAME: derived data keyed by content (e.g. metrics of a revision). Best effort.
  std::optional<std::string> read_cache(const std::string& name) const;
  void write_cache(const std::string& name, std::string_view bytes);

 private:
  fs::path object_path(const std::string& id) const;
  std::string put_object(std::string_view bytes);
  json read_id_marks() const;
  void raise_id_marks(const json& doc);
  std::string read_ref(const std::string& ref) const;  // "" if absent
  void write_ref_locked(const std::string& ref, const std::string& value);
  void append_log_locked(const LogEntry& e);
  void require_revision_locked(const std::string& id) const;
  void check_branch_path(const std::string& name) const;
  fs::path root_;
};

// Holds .svrev/lock for the scope (flock; the kernel drops it if the process dies).
class StoreLock {
 public:
  explicit StoreLock(const fs::path& root);
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_ = -1;
};

// Slash-separated components of [A-Za-z0-9._-], none empty or starting with '.' or '-', no
// "..", no ".lock" ending: always a file under refs/heads/, never a path outside the store.
bool is_valid_branch_name(const std::string& name);
// A full object id: 64 lower-case hex digits.
bool is_object_id(const std::string& s);
// A file's bytes (Error(io_error) when it cannot be read).
std::string read_file(const fs::path& p);

}  // namespace sv
