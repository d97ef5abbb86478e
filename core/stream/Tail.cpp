#include "core/stream/Tail.h"

#include <algorithm>
#include <limits>

#include "core/store/NumericsStore.h"
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
        Watched w;
        w.id = id;
        w.last_seq = std::min(after, records_.lastSeq(id));
        w.numerics_step = w.last_seq > 0 ? records_.stepAtSeq(id, w.last_seq) : 0;
        runs_.push_back(w);
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

void Tail::sendRows(Watched& w, const Sink& out) {
    const store::NumericsStore numerics(db_);
    for (;;) {
        const auto rows = records_.recordsSince(w.id, w.last_seq, kChunk);
        int64_t top = w.numerics_step;
        for (const auto& r : rows) {
            if (const auto* s = std::get_if<run::StepRecord>(&r.record))
                top = std::max(top, s->step);
        }
        // Read after the rows: a step's numerics are committed no later than its row.
        auto groups = top > w.numerics_step
                          ? numericsGroups(w.id, numerics.rowsOfSteps(w.id, w.numerics_step, top))
                          : std::vector<NumericsGroup>{};
        auto next = groups.begin();
        for (const auto& r : rows) {
            if (const auto* s = std::get_if<run::StepRecord>(&r.record)) {
                for (; next != groups.end() && next->step <= s->step; ++next)
                    out(*next);
            }
            out(RowRecord{w.id, r});
        }
        for (; next != groups.end(); ++next)
            out(*next);
        w.numerics_step = top;
        if (!rows.empty())
            w.last_seq = rows.back().seq;
        if (static_cast<int64_t>(rows.size()) < kChunk)
            break;
    }
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
        sendRows(w, out);
        if (ended(row->status)) {
            // Numerics of a step whose row never came (the run ended in between).
            const store::NumericsStore numerics(db_);
            for (auto& group :
                 numericsGroups(w.id, numerics.rowsOfSteps(w.id, w.numerics_step,
                                                           std::numeric_limits<int64_t>::max())))
                out(group);
            status(w, *row, out);
        }
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
