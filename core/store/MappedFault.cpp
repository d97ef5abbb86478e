#include "core/store/private/MappedFault.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>

namespace ampbench::store::fault {
namespace {

// Everything below runs inside a signal handler: only async-signal-safe calls (open,
// read, write, close, _exit) and static buffers, no allocation.

void say(const char* text) {
    ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

bool endsWith(const char* s, const char* suffix) {
    const size_t n = std::strlen(s), m = std::strlen(suffix);
    return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

uintptr_t hex(const char*& p) {
    uintptr_t v = 0;
    for (;; ++p) {
        const char c = *p;
        if (c >= '0' && c <= '9')
            v = v * 16 + static_cast<uintptr_t>(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + static_cast<uintptr_t>(c - 'a' + 10);
        else
            return v;
    }
}

/// The file mapped at `address`, from /proc/self/maps, into `out` (empty if none).
void mappedFile(uintptr_t address, char* out, size_t size) {
    out[0] = '\0';
    const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char line[8192];
    size_t used = 0;
    char c = 0;
    while (::read(fd, &c, 1) == 1) {
        if (c != '\n') {
            if (used + 1 < sizeof line)
                line[used++] = c;
            continue;
        }
        line[used] = '\0';
        used = 0;
        const char* p = line;
        const uintptr_t from = hex(p);
        if (*p != '-')
            continue;
        ++p;
        const uintptr_t to = hex(p);
        if (address < from || address >= to)
            continue;
        const char* path = std::strchr(line, '/');
        if (path) {
            std::strncpy(out, path, size - 1);
            out[size - 1] = '\0';
        }
        break;
    }
    ::close(fd);
}

void onBus(int, siginfo_t* info, void*) {
    static char file[4096];
    mappedFile(reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr), file, sizeof file);
    const bool database = endsWith(file, "-shm") || endsWith(file, "-wal");
    say("ampbench: the system refused access to the memory-mapped file ");
    say(file[0] ? file : "(unknown)");
    say(" (it was made immutable or read-only, truncated, or its disk failed); stopping.");
    if (database)
        say(" Every row committed to the database before is kept; readers show the run as "
            "interrupted.");
    say("\n");
    ::_exit(database ? 4 : 3);
}

}  // namespace

void watchMappedFiles() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction old {};
        if (::sigaction(SIGBUS, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            return;  // the program handles SIGBUS itself
        struct sigaction sa {};
        sa.sa_sigaction = onBus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGBUS, &sa, nullptr);
    });
}

}  // namespace ampbench::store::fault
