// The schedulers' declarations and what is made from them (core/launch): `launch`'s
// arguments, the checks, job-file JSON and stored text of their options; the array
// ranges a scheduler's tools write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/launch/Program.h"
#include "core/launch/Scheduler.h"
#include "core/launch/Slurm.h"
#include "core/launch/TaskList.h"

namespace fs = std::filesystem;
using namespace ampbench::launch;

namespace {

const SchedulerInfo& slurmInfo() {
    return schedulerNamed("slurm")->info();
}

}  // namespace

TEST(SchedulerDeclarations, EveryDeclarationIsWholeAndSharedFlagsAgree) {
    ASSERT_GE(schedulers().size(), 1u);
    std::set<std::string> names;
    std::map<std::string, OptionKind> kinds;
    for (const Scheduler* s : schedulers()) {
        const SchedulerInfo& info = s->info();
        EXPECT_TRUE(names.insert(info.name).second) << info.name << " twice";
        EXPECT_EQ(schedulerNamed(info.name), s);
        EXPECT_FALSE(info.title.empty());
        EXPECT_FALSE(info.tools.empty());
        EXPECT_NE(std::find(info.tools.begin(), info.tools.end(), info.query_tool),
                  info.tools.end());
        EXPECT_NE(std::find(info.tools.begin(), info.tools.end(), info.cancel_tool),
                  info.tools.end());
        std::set<std::string> keys;
        for (const auto& o : info.options) {
            EXPECT_TRUE(keys.insert(o.key).second) << info.name << ": " << o.key << " twice";
            EXPECT_EQ(o.flag.rfind("--", 0), 0u) << o.flag;
            EXPECT_NE(o.label.find('&'), std::string::npos) << o.label << " has no mnemonic";
            EXPECT_FALSE(o.help.empty());
            // One flag is one CLI option: schedulers that share a flag take one kind.
            const auto [it, fresh] = kinds.emplace(o.flag, o.kind);
            EXPECT_TRUE(fresh || it->second == o.kind) << o.flag << " of two kinds";
        }
    }
    EXPECT_EQ(schedulerNamed("pbs"), nullptr);
    EXPECT_EQ(schedulerFlags(), "--slurm");
}

TEST(SchedulerDeclarations, SlurmsStoredSettingsKeepTheirKeys) {
    // A desktop's hosts saved before the declarations stored these keys: they still load.
    std::vector<std::string> keys;
    for (const auto& o : slurmInfo().options) {
        keys.push_back(settingsKey(slurmInfo(), o));
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"slurm_partition", "slurm_gpus_per_task",
                                              "slurm_time_limit", "slurm_sbatch_options"}));
}

TEST(SchedulerOptions, ArgumentsFollowTheDeclarationsOrderAndForms) {
    OptionValues v;
    setOptionText(v, *findOption(slurmInfo(), "sbatch_options"), " --qos=long  --account=lab ");
    setOptionText(v, *findOption(slurmInfo(), "time_limit"), "2:00:00");
    setOptionText(v, *findOption(slurmInfo(), "gpus_per_task"), "2");
    setOptionText(v, *findOption(slurmInfo(), "partition"), "gpu");
    EXPECT_EQ(launchArguments(slurmInfo(), v),
              (std::vector<std::string>{"--slurm", "--partition", "gpu", "--gpus-per-task", "2",
                                        "--time-limit", "2:00:00", "--sbatch-option=--qos=long",
                                        "--sbatch-option=--account=lab"}));
    // A count at its least is "not asked for": no flag, and no value kept.
    setOptionText(v, *findOption(slurmInfo(), "gpus_per_task"), "0");
    EXPECT_EQ(v.count("gpus_per_task"), 0u);
    EXPECT_EQ(optionText(v, *findOption(slurmInfo(), "sbatch_options")),
              "--qos=long --account=lab");
    EXPECT_EQ(launchArguments(slurmInfo(), {}), (std::vector<std::string>{"--slurm"}));
}

TEST(SchedulerOptions, EachBadValueIsNamedWithWhatItShouldBe) {
    const OptionValues bad = {{"partition", {"gpu;reboot"}},
                              {"time_limit", {"two hours"}},
                              {"sbatch_options", {"--qos=long", "qos=long"}},
                              {"gpus_per_task", {"65"}},
                              {"queue", {"x"}}};
    const auto byFlag = checkOptions(slurmInfo(), bad, Naming::Flag);
    ASSERT_EQ(byFlag.size(), 5u);
    const auto has = [&](const std::vector<std::string>& all, const std::string& part) {
        return std::any_of(all.begin(), all.end(),
                           [&](const std::string& p) { return p.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has(byFlag, "--partition \"gpu;reboot\": letters, digits")) << byFlag[0];
    EXPECT_TRUE(has(byFlag, "--time-limit \"two hours\": as sbatch --time takes it"));
    EXPECT_TRUE(has(byFlag, "--sbatch-option \"qos=long\": each begins with"));
    EXPECT_TRUE(has(byFlag, "--gpus-per-task \"65\": a whole number from 0 to 64"));
    EXPECT_TRUE(has(byFlag, "\"queue\" is no option of Slurm"));
    const auto byLabel = checkOptions(slurmInfo(), bad, Naming::Label);
    EXPECT_TRUE(has(byLabel, "Partition \u201cgpu;reboot\u201d")) << byLabel[0];
    EXPECT_TRUE(has(byLabel, "sbatch options \u201cqos=long\u201d"));
    EXPECT_TRUE(checkOptions(slurmInfo(),
                             {{"partition", {"gpu,long"}},
                              {"time_limit", {"1-00:00"}},
                              {"sbatch_options", {"--qos=long"}},
                              {"gpus_per_task", {"64"}}},
                             Naming::Flag)
                    .empty());
}

TEST(SchedulerOptions, AJobFileHoldsThemAndRefusesWhatIsNotThem) {
    const OptionValues v = {{"partition", {"gpu"}}, {"sbatch_options", {"--qos=long", "--hold"}}};
    const nlohmann::json j = optionsToJson(slurmInfo(), v);
    EXPECT_EQ(j.dump(), R"({"partition":"gpu","sbatch_options":["--qos=long","--hold"]})");
    EXPECT_EQ(optionsFromJson(slurmInfo(), j), v);
    EXPECT_THROW(optionsFromJson(slurmInfo(), nlohmann::json{{"queue", "gpu"}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(slurmInfo(), nlohmann::json{{"partition", 3}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(slurmInfo(), nlohmann::json{{"sbatch_options", "--hold"}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(slurmInfo(), nlohmann::json::array()), std::invalid_argument);
}

TEST(ArrayRanges, EachSchedulersRangesReadAsTheirIndices) {
    EXPECT_EQ(taskIndices("3"), (std::vector<int>{3}));
    EXPECT_EQ(taskIndices("[3-5,7]"), (std::vector<int>{3, 4, 5, 7}));
    EXPECT_EQ(taskIndices("3-5%2"), (std::vector<int>{3, 4, 5}));
    EXPECT_EQ(taskIndices("1-7:2"), (std::vector<int>{1, 3, 5, 7}));  // every second
    EXPECT_EQ(taskIndices("1,4"), (std::vector<int>{1, 4}));
    EXPECT_TRUE(taskIndices("x-3").empty());
    EXPECT_TRUE(taskIndices("1-3:x").empty());
}

TEST(TaskLists, TheSchedulerIsKeptAndAnOlderListReadsAsSlurms) {
    TaskList list;
    list.experiment_id = 3;
    list.spec_json = "{}";
    list.scheduler = "slurm";
    list.tasks = {{TaskRun{7, "fp32", 0, 1, "{}", 10, ""}}};
    const fs::path file =
        fs::temp_directory_path() / ("ampbench-tasks-" + std::to_string(::getpid()) + ".json");
    std::ofstream(file) << taskListText(list);
    EXPECT_EQ(readTaskList(file.string()).scheduler, "slurm");
    std::ofstream(file) << R"({"experiment_id": 3, "spec_json": "{}", "tasks": []})";
    EXPECT_EQ(readTaskList(file.string()).scheduler, "");
    fs::remove(file);
}
