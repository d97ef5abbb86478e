#include "cli/StreamOutput.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace ampbench::cli {

void StreamOutput::lost(int error) {
    broken_ = true;
    std::fprintf(stderr, "stream: the reader has gone (%s); nothing more is written to it%s%s\n",
                 std::strerror(error), advice_.empty() ? "" : "; ", advice_.c_str());
}

void StreamOutput::write(const stream::Record& record) {
    if (broken_)
        return;
    const std::string line = stream::encode(record) + '\n';
    if (std::fwrite(line.data(), 1, line.size(), out_) != line.size())
        lost(errno);
}

void StreamOutput::flush() {
    if (!broken_ && std::fflush(out_) != 0)
        lost(errno);
}

std::FILE* takeStdoutForStream() {
    std::fflush(stdout);
    const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        std::fprintf(stderr, "stream: cannot set up stdout: %s\n", std::strerror(errno));
        return nullptr;
    }
    std::signal(SIGPIPE, SIG_IGN);
    std::FILE* out = ::fdopen(fd, "w");
    if (!out) {
        std::fprintf(stderr, "stream: cannot set up stdout: %s\n", std::strerror(errno));
        return nullptr;
    }
    // Lines are handed on by flush() per batch, not by the buffer filling up.
    std::setvbuf(out, nullptr, _IOFBF, 1 << 16);
    return out;
}

void RunStreamer::planned(const std::string& environment_json, int64_t experiment_id) {
    out_.write(stream::makeHeader(environment_json, db_.databaseId()));
    if (auto e = db_.experiment(experiment_id))
        out_.write(*e);
    for (const auto& r : db_.runs(experiment_id))
        out_.write(r);
    out_.flush();
}

// Listeners must not throw: a read that fails costs the stream a record (the
// database has it; `tail` writes it), never the run.
void RunStreamer::runStarted(int64_t run_id) {
    try {
        if (auto r = db_.run(run_id))
            out_.write(*r);  // running now, with its environment
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stream: run %lld: %s\n", static_cast<long long>(run_id), e.what());
    }
    out_.flush();
}

void RunStreamer::numericsCommitted(int64_t run_id, const std::vector<run::NumericsRecord>& rows) {
    for (const auto& group : stream::numericsGroups(run_id, rows))
        out_.write(group);
    out_.flush();
}

void RunStreamer::rowsCommitted(int64_t run_id, const std::vector<store::SequencedRecord>& rows) {
    for (const auto& row : rows)
        out_.write(stream::RowRecord{run_id, row});
    out_.flush();
}

void RunStreamer::runFinished(int64_t run_id) {
    try {
        if (auto r = db_.run(run_id)) {
            out_.write(
                stream::StatusRecord{run_id, r->status, r->failure, r->error, db_.lastSeq(run_id)});
            ended_.insert(run_id);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stream: run %lld: %s\n", static_cast<long long>(run_id), e.what());
    }
    out_.flush();
}

void RunStreamer::closeExperiment(int64_t experiment_id) {
    for (const auto& r : db_.runs(experiment_id)) {
        if (!ended_.count(r.id))
            runFinished(r.id);
    }
}

}  // namespace ampbench::cli
