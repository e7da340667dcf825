// Progress of long work for a person watching: one line on stderr, rewritten in place ("\r"),
// ended with a newline when the work is done. Shown only when stderr is a terminal and --quiet
// is not given, so pipes, logs, CI and tests see nothing; standard output is never touched.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>

namespace sv {

class Progress {
 public:
  // Seconds on a steady clock; tests give their own.
  using Clock = std::function<double()>;

  // `prefix` leads every line ("sv-fit" gives "sv-fit: 37/144 drawings"); `shown` says whether
  // anything is written at all (Progress::wanted). Writes to `out`.
  Progress(std::string prefix, bool shown, std::ostream& out, Clock clock = {});
  // On std::cerr, shown when wanted(quiet).
  Progress(std::string prefix, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether progress goes to stderr: it is a terminal and not quiet.
  static bool wanted(bool quiet);

  // The work's state now ("37/144 drawings"). Redraws the line at most every 0.1 s; an update
  // that comes sooner is kept and drawn by the next one or by finish.
  void update(const std::string& text);
  // Erases the line, so that a message can be printed on stderr; the next update redraws it.
  void clear();
  // Draws the last state if it is not on the line yet and ends the line. Only the first call
  // (or the destructor) does anything.
  void finish();

 private:
  void draw();
  std::string prefix_;
  bool shown_;
  std::ostream& out_;
  Clock clock_;
  std::string pending_;       // the last state given
  size_t drawn_width_ = 0;    // characters on the line now (0: nothing drawn)
  bool drawn_current_ = true; // the line shows pending_
  double last_draw_ = 0;
  bool ever_drawn_ = false, finished_ = false;
};

}  // namespace sv
