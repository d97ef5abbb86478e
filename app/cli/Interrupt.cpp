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

InterruptScope::InterruptScope(run::CancelToken& token) {
    g_token = &token;
    previous_int_ = std::signal(SIGINT, cancelOnSignal);
    previous_term_ = std::signal(SIGTERM, cancelOnSignal);
}

InterruptScope::~InterruptScope() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
    g_token = nullptr;
}

}  // namespace ampbench::cli
