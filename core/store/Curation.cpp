// What the user does with recorded rows besides notes and names: run labels, tags,
// and the trash (hidden rows kept until the trash is emptied). Part of Database.
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "core/store/Database.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {
namespace {

using schema::ImplicitTransaction;
using schema::Statement;

[[noreturn]] void fail(StoreError::Kind kind, const std::string& message) {
    throw StoreError(kind, message);
}

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

bool hasControl(const std::string& text) {
    return std::any_of(text.begin(), text.end(),
                       [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

/// UTF-8 code points (continuation bytes not counted).
size_t characters(const std::string& text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(),
                                             [](unsigned char c) { return (c & 0xC0) != 0x80; }));
}

std::string runName(const RunRow& r) {
    return "run " + std::to_string(r.id) + " (" + r.arm + " · seed " + std::to_string(r.seed) + ")";
}

/// Throws InUse when the run cannot go to the trash now.
void requireIdle(const RunRow& r, const std::string& what) {
    if (r.status == run::RunStatus::Running) {
        fail(StoreError::Kind::InUse,
             runName(r) + " is training; cancel it before moving " + what + " to the trash");
    }
    if (r.status == run::RunStatus::Queued) {
        fail(StoreError::Kind::InUse, runName(r) +
                                          " is queued to train; cancel the experiment "
                                          "before moving " +
                                          what + " to the trash");
    }
}

}  // namespace

void Database::requireSchema5(const char* what) const {
    if (schema_version_ < 5) {
        fail(StoreError::Kind::Io, path_ + " holds schema " + std::to_string(schema_version_) +
                                       ", which has no " + what +
                                       "; open it read-write once to upgrade it");
    }
}

// --- the trash ---

void Database::trashExperiment(int64_t experiment_id) {
    requireSchema5("trash");
    const auto e = experiment(experiment_id);
    const std::string name = "experiment " + std::to_string(experiment_id);
    if (!e)
        fail(StoreError::Kind::NotFound, path_ + " has no " + name);
    if (!e->trashed_at.empty())
        fail(StoreError::Kind::NotFound, name + " is already in the trash");
    ImplicitTransaction tx(db_, path_);
    for (const RunRow& r : runs(experiment_id))
        requireIdle(r, name);
    Statement st(db_, path_, "UPDATE experiments SET trashed_at = ?2 WHERE id = ?1",
                 "moving " + name + " to the trash");
    st.bindInt(1, experiment_id).bindText(2, schema::nowIso()).run();
    tx.commit();
}

void Database::trashRun(int64_t run_id) {
    requireSchema5("trash");
    const std::string name = "run " + std::to_string(run_id);
    ImplicitTransaction tx(db_, path_);
    const auto r = run(run_id);
    if (!r)
        fail(StoreError::Kind::NotFound, path_ + " has no " + name);
    if (r->inTrash()) {
        fail(StoreError::Kind::NotFound, name + " is already in the trash" +
                                             (r->trashed_at.empty() ? " with its experiment" : ""));
    }
    requireIdle(*r, "it");
    Statement st(db_, path_, "UPDATE runs SET trashed_at = ?2 WHERE id = ?1",
                 "moving " + name + " to the trash");
    st.bindInt(1, run_id).bindText(2, schema::nowIso()).run();
    tx.commit();
}

void Database::restoreExperiment(int64_t experiment_id) {
    requireSchema5("trash");
    Statement st(db_, path_,
                 "UPDATE experiments SET trashed_at = '' WHERE id = ?1 AND trashed_at <> ''",
                 "restoring experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).run();
    if (sqlite3_changes(db_) == 0) {
        fail(StoreError::Kind::NotFound,
             "experiment " + std::to_string(experiment_id) + " is not in the trash of " + path_);
    }
}

void Database::restoreRun(int64_t run_id) {
    requireSchema5("trash");
    const auto r = run(run_id);
    const std::string name = "run " + std::to_string(run_id);
    if (!r || r->trashed_at.empty())
        fail(StoreError::Kind::NotFound, name + " is not in the trash of " + path_);
    if (r->experiment_trashed) {
        fail(StoreError::Kind::InUse,
             name + " belongs to experiment " + std::to_string(r->experiment_id) +
                 ", which is in the trash too; restore the experiment first");
    }
    Statement st(db_, path_, "UPDATE runs SET trashed_at = '' WHERE id = ?1", "restoring " + name);
    st.bindInt(1, run_id).run();
}

std::vector<TrashRow> Database::trash() const {
    if (schema_version_ < 5)
        return {};
    std::vector<TrashRow> out;
    {
        Statement st(db_, path_,
                     "SELECT e.id, e.name, e.trashed_at, (SELECT COUNT(*) FROM runs r "
                     "WHERE r.experiment_id = e.id AND r.trashed_at = '') "
                     "FROM experiments e WHERE e.trashed_at <> ''",
                     "listing the trash");
        while (st.step()) {
            TrashRow t;
            t.id = t.experiment_id = st.i64(0);
            t.name = t.experiment_name = st.text(1);
            t.trashed_at = st.text(2);
            t.run_count = static_cast<int>(st.i64(3));
            out.push_back(std::move(t));
        }
    }
    {
        Statement st(db_, path_,
                     "SELECT r.id, r.experiment_id, e.name, r.arm, r.seed, r.label, r.trashed_at "
                     "FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                     "WHERE r.trashed_at <> '' AND e.trashed_at = ''",
                     "listing the trash");
        while (st.step()) {
            TrashRow t;
            t.is_run = true;
            t.id = st.i64(0);
            t.experiment_id = st.i64(1);
            t.experiment_name = st.text(2);
            t.name = st.text(3) + " · seed " + std::to_string(st.i64(4));
            if (const std::string label = st.text(5); !label.empty())
                t.name = label + " (" + t.name + ")";
            t.trashed_at = st.text(6);
            out.push_back(std::move(t));
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const TrashRow& a, const TrashRow& b) {
        return a.trashed_at != b.trashed_at ? a.trashed_at > b.trashed_at : a.id > b.id;
    });
    return out;
}

int Database::emptyTrash() {
    requireSchema5("trash");
    ImplicitTransaction tx(db_, path_);
    int erased = 0;
    // Runs trashed on their own (their rows go through ON DELETE CASCADE), then
    // experiments with every run they hold.
    for (const char* sql : {"DELETE FROM runs WHERE trashed_at <> '' AND experiment_id IN "
                            "(SELECT id FROM experiments WHERE trashed_at = '')",
                            "DELETE FROM experiments WHERE trashed_at <> ''"}) {
        Statement st(db_, path_, sql, "emptying the trash");
        st.run();
        erased += sqlite3_changes(db_);
    }
    tx.commit();
    return erased;
}

// --- labels and tags ---

void Database::setRunLabel(int64_t run_id, const std::string& label) {
    requireSchema5("run labels");
    const std::string text = trim(label);
    if (hasControl(text))
        throw std::invalid_argument("a run's label cannot hold a line break or control character");
    if (characters(text) > kMaxLabelLength) {
        throw std::invalid_argument("a run's label has at most " + std::to_string(kMaxLabelLength) +
                                    " characters; this one has " +
                                    std::to_string(characters(text)));
    }
    Statement st(db_, path_, "UPDATE runs SET label = ?2 WHERE id = ?1",
                 "naming run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, text).run();
    if (sqlite3_changes(db_) == 0)
        fail(StoreError::Kind::NotFound, path_ + " has no run " + std::to_string(run_id));
}

void Database::setExperimentTags(int64_t experiment_id, const std::vector<std::string>& tags) {
    requireSchema5("tags");
    const std::string text = joinTags(parseTags(joinTags(tags)));
    Statement st(db_, path_, "UPDATE experiments SET tags = ?2 WHERE id = ?1",
                 "tagging experiment " + std::to_string(experiment_id));
    st.bindInt(1, experiment_id).bindText(2, text).run();
    if (sqlite3_changes(db_) == 0) {
        fail(StoreError::Kind::NotFound,
             path_ + " has no experiment " + std::to_string(experiment_id));
    }
}

void Database::setRunTags(int64_t run_id, const std::vector<std::string>& tags) {
    requireSchema5("tags");
    const std::string text = joinTags(parseTags(joinTags(tags)));
    Statement st(db_, path_, "UPDATE runs SET tags = ?2 WHERE id = ?1",
                 "tagging run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, text).run();
    if (sqlite3_changes(db_) == 0)
        fail(StoreError::Kind::NotFound, path_ + " has no run " + std::to_string(run_id));
}

std::vector<std::string> Database::parseTags(const std::string& text) {
    std::vector<std::string> out;
    std::vector<std::string> seen;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        const std::string tag = trim(text.substr(start, comma - start));
        start = comma + 1;
        if (tag.empty())
            continue;
        if (hasControl(tag))
            throw std::invalid_argument("the tag \"" + tag.substr(0, kMaxTagLength) +
                                        "\" holds a line break or control character");
        if (characters(tag) > kMaxTagLength) {
            throw std::invalid_argument("the tag \"" + tag + "\" is longer than " +
                                        std::to_string(kMaxTagLength) + " characters");
        }
        const std::string key = lower(tag);
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            continue;
        seen.push_back(key);
        out.push_back(tag);
    }
    if (out.size() > kMaxTags) {
        throw std::invalid_argument("at most " + std::to_string(kMaxTags) + " tags; " +
                                    std::to_string(out.size()) + " were given");
    }
    return out;
}

std::string Database::joinTags(const std::vector<std::string>& tags) {
    std::string out;
    for (const std::string& t : tags)
        out += (out.empty() ? "" : ", ") + t;
    return out;
}

}  // namespace ampbench::store
