#include "core/cancel.hpp"

namespace sv {

namespace {
thread_local Cancellation* current = nullptr;
}

CancelScope::CancelScope(Cancellation* c) : previous_(current) { current = c; }

CancelScope::~CancelScope() { current = previous_; }

bool cancelled() {
  if (!current || !current->requested.load()) return false;
  current->honoured = true;
  return true;
}

void stop_if_cancelled() {
  if (cancelled()) throw CallCancelled();
}

void report_progress(double done, double total, const std::string& message) {
  if (current && current->progress) current->progress(done, total, message);
}

}  // namespace sv
