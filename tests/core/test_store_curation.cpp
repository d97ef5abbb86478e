// The trash (hidden, restorable, erased only when emptied), run labels and tags,
// and the schema step that added them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <stdexcept>

#include "ScratchDir.h"
#include "StoreDowngrade.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using ampbench::store::Database;
using ampbench::store::StoreError;
using namespace ampbench::run;

namespace {

class StoreCuration : public ampbench::test::ScratchDirTest {
  protected:
    void SetUp() override {
        ScratchDirTest::SetUp();
        db_ = Database::open(file("trash.db"));
        keep_ = db_->createExperiment("keep", "{}");
        keepRun_ = db_->createRun(keep_, "fp32", 0, 1, "{}", 10);
        drop_ = db_->createExperiment("drop", "{}");
        dropRuns_ = {db_->createRun(drop_, "fp32", 0, 1, "{}", 10),
                     db_->createRun(drop_, "amp", 1, 1, "{}", 10)};
        for (int64_t id : {keepRun_, dropRuns_[0], dropRuns_[1]}) {
            db_->markRunning(id, "{}");
            db_->insertSteps(id, {step(1), step(2)});
            db_->finishRun(id, RunStatus::Finished, "");
        }
    }
    void TearDown() override {
        db_.reset();
        ScratchDirTest::TearDown();
    }
    static StepRecord step(int64_t i) {
        StepRecord s;
        s.step = i;
        s.samples = 64 * i;
        s.loss = 1.0;
        return s;
    }
    std::vector<int64_t> experimentIds() const {
        std::vector<int64_t> ids;
        for (const auto& e : db_->experiments())
            ids.push_back(e.id);
        return ids;
    }
    std::vector<int64_t> runIds(std::optional<int64_t> experiment = std::nullopt) const {
        std::vector<int64_t> ids;
        for (const auto& r : db_->runs(experiment))
            ids.push_back(r.id);
        return ids;
    }

    std::unique_ptr<Database> db_;
    int64_t keep_ = 0, keepRun_ = 0, drop_ = 0;
    std::vector<int64_t> dropRuns_;
};

template <typename Fn>
std::string expectStoreError(StoreError::Kind kind, Fn fn) {
    try {
        fn();
    } catch (const StoreError& e) {
        EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no StoreError thrown";
    return {};
}

}  // namespace

TEST_F(StoreCuration, TrashedExperimentIsHiddenKeptAndRestored) {
    db_->trashExperiment(drop_);
    EXPECT_EQ(experimentIds(), std::vector<int64_t>{keep_});
    EXPECT_EQ(runIds(), std::vector<int64_t>{keepRun_});
    EXPECT_TRUE(db_->rerunsOf(keep_).empty());
    // Asked for by id it still reads, marked, with its runs and their rows.
    ASSERT_TRUE(db_->experiment(drop_));
    EXPECT_FALSE(db_->experiment(drop_)->trashed_at.empty());
    EXPECT_EQ(runIds(drop_), dropRuns_);
    EXPECT_TRUE(db_->run(dropRuns_[0])->inTrash());
    EXPECT_TRUE(db_->run(dropRuns_[0])->experiment_trashed);
    EXPECT_EQ(db_->stepCount(dropRuns_[0]), 2);

    const auto trash = db_->trash();
    ASSERT_EQ(trash.size(), 1u);
    EXPECT_FALSE(trash[0].is_run);
    EXPECT_EQ(trash[0].id, drop_);
    EXPECT_EQ(trash[0].name, "drop");
    EXPECT_EQ(trash[0].run_count, 2);

    const std::string again =
        expectStoreError(StoreError::Kind::NotFound, [&] { db_->trashExperiment(drop_); });
    EXPECT_NE(again.find("already in the trash"), std::string::npos) << again;

    db_->restoreExperiment(drop_);
    EXPECT_EQ(experimentIds().size(), 2u);
    EXPECT_EQ(runIds().size(), 3u);
    EXPECT_TRUE(db_->trash().empty());
    EXPECT_TRUE(db_->experiment(drop_)->trashed_at.empty());
    expectStoreError(StoreError::Kind::NotFound, [&] { db_->restoreExperiment(drop_); });
}

TEST_F(StoreCuration, TrashedRunIsHiddenFromItsExperimentAndCount) {
    db_->trashRun(dropRuns_[1]);
    EXPECT_EQ(runIds(drop_), std::vector<int64_t>{dropRuns_[0]});
    EXPECT_EQ(db_->experiment(drop_)->run_count, 1);
    EXPECT_EQ(runIds().size(), 2u);
    ASSERT_TRUE(db_->run(dropRuns_[1]));
    EXPECT_FALSE(db_->run(dropRuns_[1])->trashed_at.empty());
    EXPECT_FALSE(db_->run(dropRuns_[1])->experiment_trashed);

    // Its experiment follows it into the trash: the trash lists the experiment alone,
    // and restoring it leaves the run that went first in the trash.
    db_->trashExperiment(drop_);
    ASSERT_EQ(db_->trash().size(), 1u);
    const std::string first =
        expectStoreError(StoreError::Kind::InUse, [&] { db_->restoreRun(dropRuns_[1]); });
    EXPECT_NE(first.find("restore the experiment first"), std::string::npos) << first;
    db_->restoreExperiment(drop_);
    EXPECT_EQ(runIds(drop_), std::vector<int64_t>{dropRuns_[0]});
    const auto trash = db_->trash();
    ASSERT_EQ(trash.size(), 1u);
    EXPECT_TRUE(trash[0].is_run);
    EXPECT_EQ(trash[0].id, dropRuns_[1]);
    EXPECT_EQ(trash[0].experiment_name, "drop");
    EXPECT_EQ(trash[0].name, "amp · seed 1");

    db_->restoreRun(dropRuns_[1]);
    EXPECT_EQ(runIds(drop_), dropRuns_);
    expectStoreError(StoreError::Kind::NotFound, [&] { db_->restoreRun(dropRuns_[1]); });
    expectStoreError(StoreError::Kind::NotFound, [&] { db_->trashRun(9999); });
}

TEST_F(StoreCuration, RunningOrQueuedRunsStayOutOfTheTrash) {
    const int64_t live = db_->createRun(keep_, "amp", 1, 2, "{}", 10);  // queued by us
    std::string why = expectStoreError(StoreError::Kind::InUse, [&] { db_->trashRun(live); });
    EXPECT_NE(why.find("queued to train"), std::string::npos) << why;
    db_->markRunning(live, "{}");
    why = expectStoreError(StoreError::Kind::InUse, [&] { db_->trashRun(live); });
    EXPECT_NE(why.find("is training; cancel it"), std::string::npos) << why;
    why = expectStoreError(StoreError::Kind::InUse, [&] { db_->trashExperiment(keep_); });
    EXPECT_NE(why.find("run " + std::to_string(live)), std::string::npos) << why;
    EXPECT_TRUE(db_->trash().empty());
    db_->finishRun(live, RunStatus::Cancelled, "", FailureKind::Cancelled);
    db_->trashExperiment(keep_);
    EXPECT_EQ(experimentIds(), std::vector<int64_t>{drop_});
}

TEST_F(StoreCuration, EmptyTrashErasesOnlyWhatIsInIt) {
    db_->trashRun(keepRun_);
    db_->trashExperiment(drop_);
    EXPECT_EQ(db_->emptyTrash(), 2);  // the run, the experiment (its runs go with it)
    EXPECT_FALSE(db_->run(keepRun_));
    EXPECT_FALSE(db_->experiment(drop_));
    EXPECT_FALSE(db_->run(dropRuns_[0]));
    EXPECT_EQ(db_->stepCount(dropRuns_[0]), 0);
    EXPECT_EQ(db_->stepCount(keepRun_), 0);
    ASSERT_TRUE(db_->experiment(keep_));
    EXPECT_EQ(db_->experiment(keep_)->run_count, 0);
    EXPECT_TRUE(db_->trash().empty());
    EXPECT_EQ(db_->emptyTrash(), 0);
}

TEST_F(StoreCuration, LabelsAndTagsRoundTrip) {
    db_->setRunLabel(keepRun_, "  lr 3e-4 ");
    EXPECT_EQ(db_->run(keepRun_)->label, "lr 3e-4");
    db_->setRunTags(keepRun_, Database::parseTags("baseline, fast ,Baseline,,"));
    EXPECT_EQ(db_->run(keepRun_)->tags, (std::vector<std::string>{"baseline", "fast"}));
    db_->setExperimentTags(keep_, {"sweep", "µ-batch"});
    EXPECT_EQ(db_->experiment(keep_)->tags, (std::vector<std::string>{"sweep", "µ-batch"}));
    EXPECT_EQ(db_->experiments().at(1).tags, (std::vector<std::string>{"sweep", "µ-batch"}));
    db_->setRunLabel(keepRun_, "");
    db_->setRunTags(keepRun_, {});
    EXPECT_EQ(db_->run(keepRun_)->label, "");
    EXPECT_TRUE(db_->run(keepRun_)->tags.empty());

    // What survives a reopen.
    db_->setRunLabel(dropRuns_[0], "first");
    db_.reset();
    db_ = Database::open(file("trash.db"), Database::Mode::ReadOnly);
    EXPECT_EQ(db_->run(dropRuns_[0])->label, "first");
    EXPECT_EQ(db_->experiment(keep_)->tags.size(), 2u);
}

TEST_F(StoreCuration, BadLabelsAndTagsAreRefusedWithTheReason) {
    auto message = [](auto fn) {
        try {
            fn();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_NE(message([&] { db_->setRunLabel(keepRun_, "two\nlines"); }).find("line break"),
              std::string::npos);
    EXPECT_NE(message([&] { db_->setRunLabel(keepRun_, std::string(81, 'x')); }).find("at most 80"),
              std::string::npos);
    EXPECT_NE(message([&] { Database::parseTags(std::string(41, 't')); }).find("longer than 40"),
              std::string::npos);
    EXPECT_NE(message([&] { Database::parseTags("ok, tab\there"); }).find("\"tab\there\""),
              std::string::npos);
    std::string many;
    for (int i = 0; i < 21; ++i)
        many += "t" + std::to_string(i) + ",";
    EXPECT_NE(message([&] { Database::parseTags(many); }).find("at most 20 tags; 21"),
              std::string::npos);
    EXPECT_EQ(db_->run(keepRun_)->label, "");
    expectStoreError(StoreError::Kind::NotFound, [&] { db_->setRunLabel(9999, "x"); });
    expectStoreError(StoreError::Kind::NotFound, [&] { db_->setExperimentTags(9999, {"x"}); });
    EXPECT_EQ(Database::joinTags({"a", "b c"}), "a, b c");
}

// A file of schema 4 (before labels, tags and the trash) reads read-only as it is,
// refuses trash operations there with how to upgrade, and is migrated in place by a
// read-write open, keeping its rows.
TEST_F(StoreCuration, Schema4IsReadThenMigratedKeepingRows) {
    db_->setRunNotes(keepRun_, "kept");
    db_.reset();
    const std::string path = file("trash.db");
    {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
        char* err = nullptr;
        const int rc = sqlite3_exec(raw,
                                    (std::string(ampbench::test::kBackToSchema5) +
                                     "ALTER TABLE experiments DROP COLUMN tags; "
                                     "ALTER TABLE experiments DROP COLUMN trashed_at; "
                                     "ALTER TABLE runs DROP COLUMN label; "
                                     "ALTER TABLE runs DROP COLUMN tags; "
                                     "ALTER TABLE runs DROP COLUMN trashed_at; "
                                     "PRAGMA user_version = 4;")
                                        .c_str(),
                                    nullptr, nullptr, &err);
        const std::string message = err ? err : "";
        sqlite3_free(err);
        sqlite3_close(raw);
        ASSERT_EQ(rc, SQLITE_OK) << message;
    }
    {
        auto reader = Database::open(path, Database::Mode::ReadOnly);
        EXPECT_EQ(reader->schemaVersion(), 4);
        EXPECT_EQ(reader->experiments().size(), 2u);
        EXPECT_EQ(reader->runs().size(), 3u);
        EXPECT_EQ(reader->experiment(keep_)->run_count, 1);
        EXPECT_TRUE(reader->trash().empty());
        const std::string why =
            expectStoreError(StoreError::Kind::Io, [&] { reader->trashRun(keepRun_); });
        EXPECT_NE(why.find("open it read-write once"), std::string::npos) << why;
    }
    db_ = Database::open(path);
    EXPECT_EQ(db_->schemaVersion(), Database::kSchemaVersion);
    EXPECT_EQ(db_->runs().size(), 3u);
    EXPECT_EQ(db_->run(keepRun_)->notes, "kept");
    EXPECT_EQ(db_->run(keepRun_)->label, "");
    EXPECT_EQ(db_->stepCount(dropRuns_[1]), 2);
    db_->trashExperiment(drop_);
    db_->setRunLabel(keepRun_, "migrated");
    EXPECT_EQ(experimentIds(), std::vector<int64_t>{keep_});
    EXPECT_EQ(db_->run(keepRun_)->label, "migrated");
}
