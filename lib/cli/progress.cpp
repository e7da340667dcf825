#include "cli/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>

namespace sv {

namespace {

constexpr double kMinInterval = 0.1;  // seconds between redraws: ~10 a second at most

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Progress::Progress(std::string prefix, bool shown, std::ostream& out, Clock clock)
    : prefix_(std::move(prefix)), shown_(shown), out_(out), clock_(clock ? std::move(clock) : Clock(steady_seconds)) {}

Progress::Progress(std::string prefix, bool quiet) : Progress(std::move(prefix), wanted(quiet), std::cerr) {}

Progress::~Progress() { finish(); }

bool Progress::wanted(bool quiet) { return !quiet && ::isatty(STDERR_FILENO) == 1; }

void Progress::draw() {
  const std::string line = prefix_ + ": " + pending_;
  // Spaces over what is left of a longer line before it.
  const std::string pad(drawn_width_ > line.size() ? drawn_width_ - line.size() : 0, ' ');
  out_ << '\r' << line << pad << std::flush;
  drawn_width_ = line.size() + pad.size();
  drawn_current_ = true;
  ever_drawn_ = true;
  last_draw_ = clock_();
}

void Progress::update(const std::string& text) {
  if (!shown_ || finished_) return;
  pending_ = text;
  drawn_current_ = false;
  if (drawn_width_ == 0 || clock_() - last_draw_ >= kMinInterval) draw();  // an empty line is drawn at once
}

void Progress::clear() {
  if (!shown_ || drawn_width_ == 0) return;
  out_ << '\r' << std::string(drawn_width_, ' ') << '\r' << std::flush;
  drawn_width_ = 0;
  drawn_current_ = false;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!shown_ || !ever_drawn_) return;
  if (!drawn_current_) draw();
  out_ << '\n' << std::flush;
}

}  // namespace sv
