// Cancelling a call in progress, and telling its caller how far it is. A server that runs a tool
// on a worker thread (sv-mcp) gives the call a Cancellation and makes it the thread's for the
// call's scope; long work inside it asks cancelled() between its steps (an oracle's wait, each
// dry run of a suggestion) and stops, and says how far it is with report_progress. A call that
// stopped this way marks its cancellation honoured, so the server knows it did not complete
// (and, as the protocol asks, sends no reply for it). Outside a scope (the command line) both
// are no-ops.
#pragma once
#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>

namespace sv {

struct Cancellation {
  std::atomic<bool> requested{false};
  std::atomic<bool> honoured{false};
  // Called on the working thread with the steps done, the steps in all (0: not known) and what
  // is being done; empty: nobody listens.
  std::function<void(double done, double total, const std::string& message)> progress{};
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

// What stop_if_cancelled throws. Not an Error: code that tells a refused step from a good one
// (catch (const Error&)) must not take a cancelled call for a refusal and go on.
struct CallCancelled : std::runtime_error {
  CallCancelled() : std::runtime_error("the call was cancelled") {}
};

// Throws CallCancelled at such a point, where the work has written nothing yet.
void stop_if_cancelled();

// Tells the calling thread's caller how far its work is.
void report_progress(double done, double total, const std::string& message);

}  // namespace sv
