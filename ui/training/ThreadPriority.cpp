#include "ui/training/ThreadPriority.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace ampbench::ui {

#ifdef __linux__
namespace {
id_t threadId() {
    return static_cast<id_t>(::syscall(SYS_gettid));
}
}  // namespace

int currentThreadNice() {
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, threadId());
    return errno == 0 ? nice : 0;
}

bool lowerCurrentThreadPriority(int nice) {
    if (currentThreadNice() >= nice) {
        return true;
    }
    return ::setpriority(PRIO_PROCESS, threadId(), nice) == 0;
}
#else
int currentThreadNice() {
    return 0;
}

bool lowerCurrentThreadPriority(int) {
    return false;
}
#endif

}  // namespace ampbench::ui
