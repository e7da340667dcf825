// The revision store (.svrev/), modelled on git's loose objects: objects/ab/cdef… holds a
// scene (its canonical bytes, revision.id left out) or a blob (the source image), each named by
// the SHA-256 of its content; refs/heads/NAME holds branch tips; HEAD names a branch
// ("ref: refs/heads/NAME") or a revision; logs/HEAD records every ref move.
//
// Writes are atomic (temporary file, fsync, rename); an object is verified against its name
// when read; ref updates hold an flock on .svrev/lock (released by the kernel if a writer
// dies) and move a ref only from the value the writer saw, else Code::conflict. The ref move is
// the commit: the log entry follows it, and a log that cannot be appended is a warning on the
// applied change (take_warnings), never its failure.
//
// The store trusts nothing on disk: every file under .svrev is reached from the directory held
// open when the store is opened, without following a symlink at any step (core/file.hpp), and
// read only when it is a regular file within its size limit, checked before a byte is read. A
// symlink, FIFO, device or folder where an object, a ref, HEAD or the log should be is
// corrupt_object (its target is never named nor read); views and caches are derived data, written
// best effort and never needed by a read.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/file.hpp"
#include "core/scene.hpp"

namespace sv {

namespace fs = std::filesystem;

struct LogEntry {
  std::string old_id, new_id;  // "" for none
  long long time = 0;          // seconds since the epoch
  std::string ref;             // the ref that moved, e.g. "refs/heads/main" or "HEAD"
  std::string message;
};

// The largest object read back: a scene (kMaxSceneBytes) or a source image (kMaxImageFileBytes).
constexpr size_t kMaxObjectBytes = kMaxSceneBytes > kMaxImageFileBytes ? kMaxSceneBytes : kMaxImageFileBytes;
// The largest ref or HEAD ("ref: refs/heads/NAME" or an id), and the largest log read.
constexpr size_t kMaxRefBytes = 4096;
constexpr size_t kMaxLogBytes = kMaxSceneBytes;

class Store {
 public:
  // Finds the store as git finds .git: `flag` (--store), else $SV_STORE, else the nearest
  // .svrev from the working directory upward. A flag or variable naming a directory that
  // holds .svrev means that .svrev.
  static std::optional<fs::path> locate(const std::optional<std::string>& flag);
  // Creates DIR/.svrev (or DIR itself when it is named *.svrev) with an unborn branch main.
  static Store init(const fs::path& dir);
  // root is the .svrev directory (followed if it is a symlink: the user named it), held open for
  // the store's life; checks its layout.
  explicit Store(fs::path root);

  const fs::path& root() const { return root_; }
  int dir_fd() const { return dir_->get(); }  // .svrev, open

  std::string put_blob(std::string_view bytes);
  // Assigns scene.revision.id and stores the scene; returns the id. A scene that fails the scene
  // schema or its invariants (check_scene_invariants) is refused with invalid_scene and nothing
  // is written: every stored revision can be read back. The store's id marks are raised to the
  // scene's first.
  std::string put_scene(Scene& scene);
  // Whether anything is at the object's name (read_object says whether it is a valid object).
  bool has_object(const std::string& id) const;
  // Verified against its name; corrupt_object when it is not, or is not a regular file, or is
  // larger than kMaxObjectBytes (a scene: kMaxSceneBytes), refused before it is read.
  std::string read_object(const std::string& id) const;
  Scene read_scene(const std::string& id) const;
  // Every id-named entry in the fan-out folders (whatever it is: read_object checks).
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

  // The one recording rule of every writer (stages, tools, batches, refine, MCP): a result
  // computed from revision `read` becomes a revision only while HEAD still names `read`.
  // require_head refuses (conflict) when it does not: writers call it before their work, on the
  // revision they read, so a stale request costs nothing and writes nothing. record checks
  // again, stores the scene and moves HEAD from `read` under the lock (a writer losing the race
  // in between leaves only an unreferenced object, which gc removes); returns the new id.
  void require_head(const std::string& read) const;
  std::string record(Scene& scene, const std::string& read, const std::string& why);
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
  // skipped and counted in `torn`. A log that is not a regular file, or is larger than
  // kMaxLogBytes, is not read: no entries, and why in `unreadable` (when given; else
  // corrupt_object is thrown).
  std::vector<LogEntry> log(size_t* torn = nullptr, std::string* unreadable = nullptr) const;

  // Every ref under refs/ ("refs/heads/main", "refs/tags/final", …) with its raw value, sorted;
  // temporary files are skipped. A ref that is not a regular file (a symlink, a FIFO) or cannot
  // be read is left out and named in `damaged` with why (when given; else corrupt_object is
  // thrown). A ref that vanishes while it is listed (a writer renaming) is simply not there.
  std::vector<std::pair<std::string, std::string>> refs(std::vector<std::string>* damaged = nullptr) const;
  std::string head_text() const;  // HEAD's raw content ("ref: refs/heads/NAME" or an id)
  // One ref's raw value ("refs/heads/main", "refs/tags/final", "HEAD"): "" if absent.
  std::string ref_value(const std::string& ref) const { return read_ref(ref); }

  // The highest id number of `kind` ("primitive" or "region") any scene ever stored here has
  // used, on any branch (.svrev/id_marks, raised by put_scene under the lock; derived from the
  // stored scenes when the file is missing). A scene's own marks go back with a revert; these do
  // not, so an edit seeded with them never hands out an id the history has used.
  int id_mark(const std::string& kind) const;

  // .svrev/cache/NAME: derived data keyed by content (e.g. metrics of a revision). Best effort:
  // what cannot be read is absent, what cannot be written is left unwritten.
  std::optional<std::string> read_cache(const std::string& name) const;
  void write_cache(const std::string& name, std::string_view bytes);
  // .svrev/views/NAME: a tool's picture. Its path, or none with why (a read-only or full store,
  // a views folder that is not one): a read never fails for want of it.
  std::optional<fs::path> write_view(const std::string& name, std::string_view bytes, std::string& why);

  // What changed hands with a warning since the last call (a log entry that could not be
  // appended after its ref moved): the caller reports them with its result.
  std::vector<std::string> take_warnings() { return std::exchange(warnings_, {}); }

  // For maintenance (fsck, gc): a folder's entries, not following symlinks (core/file.hpp), and
  // the removal of one entry (a file, a symlink, a FIFO: never a folder) when it was last
  // modified at least `min_age_s` ago, giving its size, or nothing when it is younger, gone or
  // cannot be removed. Removal renames the entry aside first and puts it back should a writer
  // have touched it meanwhile (put_object freshens an object it is about to name).
  std::vector<std::pair<std::string, EntryKind>> list(const std::string& rel) const;
  std::optional<uintmax_t> remove_if_older(const std::string& rel, double min_age_s);

 private:
  std::string object_rel(const std::string& id) const;
  std::string put_object(std::string_view bytes);
  json read_id_marks() const;
  void raise_id_marks(const json& doc);
  // A small file of the store (HEAD, a ref, id_marks): "" if absent; corrupt_object when it is
  // not a regular file or is larger than `limit`.
  std::string read_small(const std::string& rel, size_t limit) const;
  std::string read_ref(const std::string& ref) const;  // "" if absent
  void write_ref_locked(const std::string& ref, const std::string& value);
  void append_log_locked(const LogEntry& e);
  void require_revision_locked(const std::string& id) const;
  void check_branch_path(const std::string& name) const;
  void write_in(const std::string& rel, std::string_view bytes, mode_t mode);
  fs::path root_;
  std::shared_ptr<UniqueFd> dir_;
  std::vector<std::string> warnings_;
};

// Holds .svrev/lock for the scope (flock; the kernel drops it if the process dies). The lock
// file is opened as every file of the store is: a symlink or anything but a regular file there is
// corrupt_object, never followed.
class StoreLock {
 public:
  explicit StoreLock(const Store& store);
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

}  // namespace sv
