#include "core/stream/Tail.h"

#include <algorithm>

#include "core/store/StoreError.h"

namespace ampbench::stream {
namespace {

bool ended(run::RunStatus s) {
    return s != run::RunStatus::Queued && s != run::RunStatus::Running;
}

}  // namespace

Tail::Tail(const store::Database& db, std::vector<int64_t> run_ids, int64_t since_all,
           std::map<int64_t, int64_t> since)
    : db_(db) {
    for (int64_t id : run_ids) {
        if (!db_.run(id)) {
            throw store::StoreError(store::StoreError::Kind::NotFound,
                                    db_.path() + " has no run " + std::to_string(id));
        }
        const auto it = since.find(id);
        const int64_t after = it == since.end() ? since_all : it->second;
        // Never beyond what is stored: a status must not promise rows that do not exist.
        runs_.push_back({id, std::min(after, db_.lastSeq(id)), false, false});
    }
}

void Tail::introduce(Watched& w, const store::RunRow& row, const Sink& out) {
    if (std::find(experiments_sent_.begin(), experiments_sent_.end(), row.experiment_id) ==
        experiments_sent_.end()) {
        if (auto e = db_.experiment(row.experiment_id))
            out(*e);
        experiments_sent_.push_back(row.experiment_id);
    }
    out(row);
    w.introduced = true;
    w.sent = row.status;
}

void Tail::status(Watched& w, const store::RunRow& row, const Sink& out) {
    out(StatusRecord{w.id, row.status, row.failure, row.error, w.last_seq});
    w.done = true;
}

bool Tail::poll(const Sink& out) {
    for (Watched& w : runs_) {
        if (w.done)
            continue;
        // The status is read before the rows: a run that had ended then has all its
        // rows stored, so none is missed.
        auto row = db_.run(w.id);
        if (!row)
            throw store::StoreError(store::StoreError::Kind::NotFound,
                                    db_.path() + " no longer holds run " + std::to_string(w.id));
        if (!w.introduced) {
            introduce(w, *row, out);
        } else if (row->status != w.sent) {
            out(*row);
            w.sent = row->status;
        }
        for (;;) {
            const auto rows = db_.recordsSince(w.id, w.last_seq, kChunk);
            for (const auto& r : rows)
                out(RowRecord{w.id, r});
            if (!rows.empty())
                w.last_seq = rows.back().seq;
            if (static_cast<int64_t>(rows.size()) < kChunk)
                break;
        }
        if (ended(row->status))
            status(w, *row, out);
    }
    return done();
}

void Tail::closeAll(const Sink& out) {
    for (Watched& w : runs_) {
        if (w.done)
            continue;
        if (auto row = db_.run(w.id))
            status(w, *row, out);
    }
}

bool Tail::done() const {
    return std::all_of(runs_.begin(), runs_.end(), [](const Watched& w) { return w.done; });
}

}  // namespace ampbench::stream
