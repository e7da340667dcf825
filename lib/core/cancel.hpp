// Cancelling a call in progress. A server that runs a tool on a worker thread (sv-mcp) gives the
// call a Cancellation and makes it the thread's for the call's scope; the long waits inside it
// (an oracle's answer) ask cancelled() where they wait, and stop. A call that stopped this way
// marks its cancellation honoured, so the server knows it did not complete (and, as the
// protocol asks, sends no reply for it).
#pragma once
#include <atomic>

namespace sv {

struct Cancellation {
  std::atomic<bool> requested{false};
  std::atomic<bool> honoured{false};
};

// Makes `c` the calling thread's cancellation for the scope (nullptr: none).
class CancelScope {
 public:
  explicit CancelScope(Cancellation* c);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  Cancellation* previous_;
};

// A point where the calling thread's work may stop: true when its call has been cancelled, which
// is then marked honoured. Always false outside a CancelScope.
bool cancelled();

}  // namespace sv
