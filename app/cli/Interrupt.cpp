#include "cli/Interrupt.h"

#include <csignal>

namespace ampbench::cli {
namespace {
run::CancelToken* g_token = nullptr;  // the one token a signal cancels
extern "C" void cancelOnSignal(int) {
    if (g_token) {
        g_token->cancel();
    }
}
}  // namespace

InterruptScope::InterruptScope(run::CancelToken& token, std::vector<int> also)
    : signals_{SIGINT, SIGTERM} {
    g_token = &token;
    signals_.insert(signals_.end(), also.begin(), also.end());
    for (int s : signals_) {
        previous_.push_back(std::signal(s, cancelOnSignal));
    }
}

InterruptScope::~InterruptScope() {
    for (size_t i = 0; i < signals_.size(); ++i) {
        std::signal(signals_[i], previous_[i]);
    }
    g_token = nullptr;
}

}  // namespace ampbench::cli
