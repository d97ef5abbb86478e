#include "core/store/BatchSearchStore.h"

#include "core/store/private/Owner.h"
#include "core/store/private/Schema.h"
#include "core/util/Format.h"

namespace ampbench::store {
namespace {

std::string now() {
    return util::utcNowText();
}

}  // namespace

int64_t BatchSearchStore::create(const BatchSearchRow& r) {
    schema::Statement st(
        db_.handle(), db_.path(),
        "INSERT INTO batch_searches(experiment_id, arm, precision, checkpointing, device, "
        "budget_bytes, margin, status, spec_json, created_at, owner_pid, owner_host, owner_token) "
        "VALUES(NULLIF(?1, 0), ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, ?10, ?11, ?12)",
        "recording a max-batch search");
    st.bindInt(1, r.experiment_id).bindText(2, r.arm).bindText(3, r.precision);
    st.bindInt(4, r.checkpointing ? 1 : 0).bindText(5, r.device).bindInt(6, r.budget_bytes);
    st.bindReal(7, r.margin).bindText(8, r.spec_json).bindText(9, now());
    st.bindInt(10, owner::currentPid()).bindText(11, owner::hostName());
    st.bindText(12, owner::currentToken()).run();
    return sqlite3_last_insert_rowid(db_.handle());
}

void BatchSearchStore::addTrial(int64_t search_id, int index, const BatchTrialRow& t) {
    schema::Statement st(db_.handle(), db_.path(),
                         "INSERT OR REPLACE INTO batch_trials(search_id, idx, batch, outcome, "
                         "peak_bytes, step_ms, message) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                         "recording a max-batch trial");
    st.bindInt(1, search_id).bindInt(2, index).bindInt(3, t.batch).bindText(4, t.outcome);
    st.bindInt(5, t.peak_bytes).bindReal(6, t.step_ms).bindText(7, t.message).run();
}

void BatchSearchStore::finish(int64_t search_id, const BatchSearchRow& r) {
    schema::Statement st(db_.handle(), db_.path(),
                         "UPDATE batch_searches SET max_batch = ?2, safe_batch = ?3, "
                         "first_failure = ?4, peak_at_max = ?5, status = ?6, note = ?7 "
                         "WHERE id = ?1",
                         "finishing a max-batch search");
    st.bindInt(1, search_id).bindInt(2, r.max_batch).bindInt(3, r.safe_batch);
    st.bindInt(4, r.first_failure).bindInt(5, r.peak_at_max).bindText(6, r.status);
    st.bindText(7, r.note).run();
}

std::vector<BatchSearchRow> BatchSearchStore::searches(std::optional<int64_t> experiment_id) const {
    std::string sql =
        "SELECT id, COALESCE(experiment_id, 0), arm, precision, checkpointing, device, "
        "budget_bytes, margin, max_batch, safe_batch, first_failure, peak_at_max, status, note, "
        "spec_json, created_at, " +
        std::string(db_.schemaVersion() >= 3 ? "owner_pid, owner_host, owner_token"
                                             : "NULL, NULL, NULL") +
        " FROM batch_searches";
    if (experiment_id) {
        sql += " WHERE experiment_id = ?1";
    }
    sql += " ORDER BY id";
    schema::Statement st(db_.handle(), db_.path(), sql, "reading max-batch searches");
    if (experiment_id) {
        st.bindInt(1, *experiment_id);
    }
    std::vector<BatchSearchRow> out;
    while (st.step()) {
        BatchSearchRow r;
        r.id = st.i64(0);
        r.experiment_id = st.i64(1);
        r.arm = st.text(2);
        r.precision = st.text(3);
        r.checkpointing = st.i64(4) != 0;
        r.device = st.text(5);
        r.budget_bytes = st.i64(6);
        r.margin = st.real(7);
        r.max_batch = st.i64(8);
        r.safe_batch = st.i64(9);
        r.first_failure = st.i64(10);
        r.peak_at_max = st.i64(11);
        r.status = st.text(12);
        r.note = st.text(13);
        r.spec_json = st.text(14);
        r.created_at = st.text(15);
        // A search whose process died reads as interrupted before a writer records it.
        // One without an owner (older schema) cannot still be running after an upgrade.
        if (r.status == "running" && db_.schemaVersion() >= 3 &&
            owner::gone(st.isNull(16) ? std::nullopt : std::optional<int64_t>(st.i64(16)),
                        st.isNull(17) ? owner::hostName() : st.text(17), st.text(18), true)) {
            r.status = "interrupted";
            r.note = "the process running this search ended without finishing it";
        }
        out.push_back(std::move(r));
    }
    for (auto& r : out) {
        schema::Statement t(db_.handle(), db_.path(),
                            "SELECT batch, outcome, peak_bytes, step_ms, message FROM "
                            "batch_trials WHERE search_id = ?1 ORDER BY idx",
                            "reading max-batch trials");
        t.bindInt(1, r.id);
        while (t.step()) {
            r.trials.push_back({t.i64(0), t.text(1), t.i64(2), t.real(3), t.text(4)});
        }
    }
    return out;
}

}  // namespace ampbench::store
