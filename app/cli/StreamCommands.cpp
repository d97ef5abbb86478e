// `ampbench-cli tail` and `ingest`: a database's runs as a record stream, and a
// record stream into a database. Over SSH they carry a run on a GPU server to the
// desktop: ssh gpu ampbench-cli tail --experiment 3 --follow --stream | ampbench-cli ingest -
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/StreamOutput.h"
#include "core/analysis/Format.h"
#include "core/probe/Environment.h"
#include "core/store/Database.h"
#include "core/stream/Ingestor.h"
#include "core/stream/Tail.h"

namespace ampbench::cli {
namespace {

/// A whole number from 0 to the largest int64 (sequence numbers may reach it).
bool parseCount(const std::string& text, int64_t& out) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

/// "SEQ" for every run, or "RUN:SEQ" for one; false (with a message) on anything else.
bool parseSince(const std::vector<std::string>& items, int64_t& all,
                std::map<int64_t, int64_t>& per_run) {
    for (const auto& item : items) {
        const auto colon = item.find(':');
        int64_t run = 0, seq = 0;
        const bool ok = colon == std::string::npos
                            ? parseCount(item, all)
                            : parseCount(item.substr(0, colon), run) &&
                                  parseCount(item.substr(colon + 1), seq) && run > 0;
        if (!ok) {
            std::fprintf(stderr,
                         "tail: --since %s: expected a sequence number (SEQ) or RUN:SEQ, both "
                         "whole numbers from 0 to 9223372036854775807 (a run from 1)\n",
                         analysis::printable(item, false).c_str());
            return false;
        }
        if (colon != std::string::npos)
            per_run[run] = seq;
    }
    return true;
}

/// After an experiment's runs have ended, the job that trained them still writes
/// its verdict and its exit code: waits (up to `limit`) until that process is gone,
/// so that `status` right after the stream ends says how the job ended.
void waitForJobEnd(const std::string& db_path, int64_t experiment, std::chrono::milliseconds poll,
                   std::chrono::seconds limit) {
    try {
        if (!checkJobsDir(db_path, false))
            return;
        const auto job = readJob(jobFile(db_path, experiment), experiment);
        if (!job)
            return;
        const auto until = std::chrono::steady_clock::now() + limit;
        while (jobProcess(db_path, *job) == JobProcess::Ours &&
               std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(poll);
        }
    } catch (const JobFileError&) {
        // A job file that cannot be read tells nothing; the runs have ended.
    }
}

}  // namespace

int commandTail(const std::string& db_path, const TailOptions& o) {
    if (!o.stream) {
        std::fprintf(stderr, "tail writes the record stream only: add --stream\n");
        return kUsage;
    }
    if (o.run_id == 0 && o.experiment_id == 0) {
        std::fprintf(stderr, "tail: give --run ID or --experiment ID\n");
        return kUsage;
    }
    int64_t since_all = 0;
    std::map<int64_t, int64_t> since;
    if (!parseSince(o.since, since_all, since))
        return kUsage;
    auto db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
    std::vector<int64_t> runs;
    if (o.run_id > 0) {
        if (!db->run(o.run_id)) {
            std::fprintf(stderr, "no run %lld in %s\n", static_cast<long long>(o.run_id),
                         db_path.c_str());
            return kNotFound;
        }
        runs.push_back(o.run_id);
    } else {
        if (!db->experiment(o.experiment_id)) {
            std::fprintf(stderr, "no experiment %lld in %s\n",
                         static_cast<long long>(o.experiment_id), db_path.c_str());
            return kNotFound;
        }
        for (const auto& r : db->runs(o.experiment_id))
            runs.push_back(r.id);
    }
    std::signal(SIGPIPE, SIG_IGN);  // a reader that goes away is an error to report
    StreamOutput out(stdout);
    out.write(stream::makeHeader(probe::toJson(probe::probeEnvironment("cpu")), db->databaseId()));
    stream::Tail tail(*db, runs, since_all, since);
    const auto sink = [&](const stream::Record& r) { out.write(r); };
    for (;;) {
        const bool done = tail.poll(sink);
        out.flush();
        if (out.broken())
            return kIoError;
        if (done || !o.follow)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
    }
    if (o.follow && o.experiment_id > 0)
        waitForJobEnd(db_path, o.experiment_id, std::chrono::milliseconds(o.poll_ms),
                      std::chrono::seconds(30));
    tail.closeAll(sink);
    out.flush();
    return out.broken() ? kIoError : kOk;
}

namespace {

/// Reads lines from a descriptor, telling the caller when the input pauses.
class LineReader {
  public:
    explicit LineReader(int fd) : fd_(fd) {}
    /// Calls `line` for each complete line and `idle` whenever no input came for
    /// 100 ms; returns at the end of the input (a last line without newline too), or
    /// when `line` returns false. Returns false with errno set on a read error.
    template <class Line, class Idle>
    bool run(Line line, Idle idle) {
        std::string buffer;
        char chunk[1 << 16];
        for (;;) {
            pollfd p{fd_, POLLIN, 0};
            const int ready = ::poll(&p, 1, 100);
            if (ready == 0) {
                idle();
                continue;
            }
            if (ready < 0 && errno == EINTR)
                continue;
            const ssize_t n = ::read(fd_, chunk, sizeof chunk);
            if (n < 0) {
                if (errno == EINTR || errno == EAGAIN)
                    continue;
                return false;
            }
            if (n == 0) {
                if (!buffer.empty())
                    line(buffer);
                return true;
            }
            buffer.append(chunk, static_cast<size_t>(n));
            size_t start = 0;
            for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
                if (!line(buffer.substr(start, nl - start)))
                    return true;
            }
            buffer.erase(0, start);
        }
    }

  private:
    int fd_;
};

}  // namespace

int commandIngest(const std::string& db_path, const std::string& file, const std::string& origin) {
    if (const std::string bad = stream::nameProblem(origin); !bad.empty()) {
        std::fprintf(stderr, "ingest: --origin %s: %s\n",
                     analysis::printable(origin, false).c_str(), bad.c_str());
        return kUsage;
    }
    int fd = STDIN_FILENO;
    if (file != "-") {
        fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr, "ingest: cannot read %s: %s\n", file.c_str(),
                         std::strerror(errno));
            return kUsage;
        }
    }
    auto db = store::Database::open(db_path);
    db->requireIntact();
    // A lock another program holds is waited out as a training run waits it out.
    stream::IngestLockWait lock_wait;
    lock_wait.notice = [](const std::string& what) {
        std::fprintf(stderr, "ingest: %s\n", analysis::printable(what, false).c_str());
    };
    stream::Ingestor ingestor(*db, origin, lock_wait);
    size_t said = 0;
    auto report = [&] {
        const auto& problems = ingestor.problems();
        for (; said < problems.size(); ++said) {
            const std::string where = problems[said].line > 0
                                          ? "line " + std::to_string(problems[said].line) + ": "
                                          : std::string("at the end: ");
            std::fprintf(stderr, "ingest: %s%s\n", where.c_str(),
                         analysis::printable(problems[said].message, false).c_str());
        }
    };
    LineReader reader(fd);
    const std::string name = file == "-" ? "stdin" : file;
    const bool read_ok = reader.run(
        [&](const std::string& line) {
            const bool go_on = ingestor.feed(line);
            report();
            return go_on;
        },
        [&] { ingestor.commit(); });  // the input paused: what came is visible now
    const int read_errno = errno;
    if (fd != STDIN_FILENO)
        ::close(fd);
    ingestor.finish();
    ingestor.markCutOffRuns();  // nothing more can come: a run left running was cut off
    report();
    const auto& c = ingestor.counts();
    std::string origins;
    for (const auto& source : ingestor.sources()) {
        origins += (origins.empty() ? "'" : ", '") + source.label + "'" +
                   (source.database.empty() ? "" : " (database " + source.database + ")");
    }
    if (origins.empty())
        origins = "'" + ingestor.origin() + "'";
    const std::string refused =
        c.rows_refused > 0 ? ", " + std::to_string(c.rows_refused) + " refused" : "";
    std::printf(
        "ingested %lld lines from %s as origin %s into %s: %lld experiments and %lld runs "
        "added, %lld rows added, %lld already here%s, %lld statuses, %lld per-layer numerics "
        "rows added (%lld already here)\n",
        static_cast<long long>(c.lines), name.c_str(), analysis::printable(origins, false).c_str(),
        db_path.c_str(), static_cast<long long>(c.experiments), static_cast<long long>(c.runs),
        static_cast<long long>(c.rows_added), static_cast<long long>(c.rows_present),
        refused.c_str(), static_cast<long long>(c.statuses),
        static_cast<long long>(c.numerics_added), static_cast<long long>(c.numerics_present));
    if (!read_ok) {
        std::fprintf(stderr, "ingest: reading %s failed: %s; what was read is kept\n", name.c_str(),
                     std::strerror(read_errno));
        return kIoError;
    }
    if (ingestor.refused())
        return kStreamRefused;
    return ingestor.problems().empty() ? kOk : kStreamIncomplete;
}

}  // namespace ampbench::cli
