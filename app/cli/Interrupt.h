#pragma once
#include <vector>

#include "core/run/TrainObserver.h"

namespace ampbench::cli {

/// While alive, Ctrl-C (SIGINT), SIGTERM and each of `also` cancel `token` instead of
/// killing the process, so the run in flight ends `cancelled` with its rows kept.
class InterruptScope {
  public:
    explicit InterruptScope(run::CancelToken& token, std::vector<int> also = {});
    ~InterruptScope();
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

  private:
    std::vector<int> signals_;
    std::vector<void (*)(int)> previous_;
};

}  // namespace ampbench::cli
