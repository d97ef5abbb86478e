#pragma once
#include "core/run/TrainObserver.h"

namespace ampbench::cli {

/// While alive, Ctrl-C (SIGINT) and SIGTERM cancel `token` instead of killing the
/// process, so the run in flight ends `cancelled` with its rows kept.
class InterruptScope {
  public:
    explicit InterruptScope(run::CancelToken& token);
    ~InterruptScope();
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

  private:
    void (*previous_int_)(int);
    void (*previous_term_)(int);
};

}  // namespace ampbench::cli
