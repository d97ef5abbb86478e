// The schedulers' declarations and what is made from them (core/launch): `launch`'s
// arguments, the checks, job-file JSON and stored text of their options; Grid Engine's
// command lines and batch script, and its tools' output as a real Grid Engine wrote it
// (captured from Debian's gridengine 8.1.9 under tests/e2e/gridengine-fixture.sh,
// trimmed to the lines read); the array ranges both schedulers write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/launch/GridEngine.h"
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
const SchedulerInfo& gridEngineInfo() {
    return schedulerNamed("gridengine")->info();
}

}  // namespace

TEST(SchedulerDeclarations, EveryDeclarationIsWholeAndSharedFlagsAgree) {
    ASSERT_GE(schedulers().size(), 2u);
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
    EXPECT_EQ(schedulerFlags(), "--slurm or --gridengine");
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
    EXPECT_EQ(launchArguments(gridEngineInfo(), {}), (std::vector<std::string>{"--gridengine"}));
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
    EXPECT_TRUE(checkOptions(gridEngineInfo(),
                             {{"queue", {"gpu.q@node7"}},
                              {"time_limit", {"2:00:00"}},
                              {"qsub_options", {"-P", "lab"}}},
                             Naming::Flag)
                    .empty());
    EXPECT_EQ(
        checkOptions(gridEngineInfo(), {{"queue", {"a b"}}, {"time_limit", {"1-00"}}}, Naming::Flag)
            .size(),
        2u);
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

TEST(SchedulerOptions, GridEnginesWordsAreAListInAJobFile) {
    const OptionValues v = {{"queue", {"test"}}, {"qsub_options", {"-P", "lab"}}};
    const nlohmann::json j = optionsToJson(gridEngineInfo(), v);
    EXPECT_EQ(j.dump(), R"({"qsub_options":["-P","lab"],"queue":"test"})");
    EXPECT_EQ(optionsFromJson(gridEngineInfo(), j), v);
    EXPECT_THROW(optionsFromJson(gridEngineInfo(), nlohmann::json{{"partition", "gpu"}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(gridEngineInfo(), nlohmann::json{{"queue", 3}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(gridEngineInfo(), nlohmann::json{{"qsub_options", "-P"}}),
                 std::invalid_argument);
    EXPECT_THROW(optionsFromJson(gridEngineInfo(), nlohmann::json::array()), std::invalid_argument);
}

TEST(GridEngine, TheSubmitCommandAndBatchScriptNumberTasksFromOne) {
    const Scheduler& ge = *schedulerNamed("gridengine");
    ArrayJob job;
    job.experiment_id = 12;
    job.db_path = "/data/bench.db";
    job.dir = "/data/it's here/12.gridengine";
    job.tasks = 3;
    job.runs_per_task = 2;
    job.options = {
        {"queue", {"gpu.q"}}, {"time_limit", {"1:00:00"}}, {"qsub_options", {"-P", "lab"}}};
    EXPECT_EQ(ge.submitCommand(job, "array.sh"),
              (std::vector<std::string>{
                  "qsub", "-terse", "-t", "1-3",          "-N", "ampbench-12", "-S",      "/bin/sh",
                  "-wd",  job.dir,  "-o", job.dir,        "-j", "y",           "-V",      "-notify",
                  "-q",   "gpu.q",  "-l", "h_rt=1:00:00", "-P", "lab",         "array.sh"}));
    EXPECT_EQ(ge.taskName("12", 0), "Grid Engine task 12.1");
    // The script as Grid Engine runs it: task 3 is the experiment's task 2, its output
    // appended to task-2.out, the folder one word however it is spelled.
    const fs::path dir =
        fs::temp_directory_path() / ("ampbench-ge-script-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "it's here");
    job.dir = (dir / "it's here").string();
    job.program = (dir / "echo-args.sh").string();
    std::ofstream(job.program) << "#!/bin/sh\nprintf '%s|' \"$@\"\n";
    fs::permissions(job.program, fs::perms::owner_all);
    std::ofstream(dir / "array.sh") << ge.batchScript(job);
    const std::string run = "cd / && env SGE_TASK_ID=3 sh '" + (dir / "array.sh").string() + "'";
    ASSERT_EQ(std::system(run.c_str()), 0);
    std::ifstream said(taskOutput(job.dir, 2));
    std::string words((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
    EXPECT_EQ(words, "array-task|--dir|" + job.dir + "|--task|2|");
    fs::remove_all(dir);
}

TEST(GridEngine, QstatXmlReadsAsTheTasksItNames) {
    // `qstat -xml -g d -u root` with job 5 running (tasks 1, 2), held job 4, job 5's
    // task 3 waiting, and task 1 of job 2 requeued; job 4 is another job.
    const std::string xml = R"(<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>5</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>many</JB_name>
      <JB_owner>root</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-07T15:19:02</JAT_start_time>
      <queue_name>test@localhost</queue_name>
      <slots>1</slots>
      <tasks>1</tasks>
    </job_list>
    <job_list state="running">
      <JB_job_number>5</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>many</JB_name>
      <JB_owner>root</JB_owner>
      <state>Rr</state>
      <JAT_start_time>2026-12-07T15:19:02</JAT_start_time>
      <queue_name>test@localhost</queue_name>
      <slots>1</slots>
      <tasks>2</tasks>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>4</JB_job_number>
      <JAT_prio>0.00000</JAT_prio>
      <JB_name>held</JB_name>
      <JB_owner>root</JB_owner>
      <state>hqw</state>
      <JB_submission_time>2026-12-07T15:19:02</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
      <tasks>1-3:1</tasks>
    </job_list>
    <job_list state="pending">
      <JB_job_number>5</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_name>many</JB_name>
      <JB_owner>root</JB_owner>
      <state>qw</state>
      <JB_submission_time>2026-12-07T15:19:02</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
      <tasks>3</tasks>
    </job_list>
  </job_info>
</job_info>
)";
    const auto five = gridengine::parseQstatXml(xml, "5");
    ASSERT_EQ(five.size(), 3u);
    EXPECT_EQ(five.at(0).state, "RUNNING");
    EXPECT_EQ(five.at(0).node, "localhost");
    EXPECT_FALSE(five.at(0).pending);
    EXPECT_EQ(five.at(1).state, "RUNNING");
    EXPECT_NE(five.at(1).reason.find("restarted"), std::string::npos);
    EXPECT_EQ(five.at(2).state, "PENDING");
    EXPECT_TRUE(five.at(2).pending);
    for (const auto& [index, t] : five) {
        EXPECT_EQ(t.end, TaskEnd::None) << index;
    }
    const auto four = gridengine::parseQstatXml(xml, "4");
    ASSERT_EQ(four.size(), 3u);  // "1-3:1": tasks 1 to 3, indices 0 to 2
    EXPECT_EQ(four.at(2).state, "HELD");
    EXPECT_NE(four.at(2).reason.find("hqw"), std::string::npos);
    EXPECT_TRUE(gridengine::parseQstatXml(xml, "55").empty());
    EXPECT_TRUE(gridengine::parseQstatXml("", "5").empty());
}

TEST(GridEngine, QacctRecordsTellHowEachTaskEnded) {
    // `qacct -j N`, the lines it reads of each record: job 2's task 1 rescheduled (qmod
    // -rj) then completed; job 3's tasks exited 130 after a qdel's SIGUSR2; job 5's
    // task over its h_rt; job 6's task killed (SIGKILL); and job 7 rescheduled, not
    // yet run again.
    const std::string requeued = R"(==============================================================
qname        test                
hostname     localhost           
jobnumber    2                   
taskid       1                   
start_time   -/-
failed       25  : rescheduling
exit_status  0                   
ru_wallclock 0s
==============================================================
qname        test                
hostname     localhost           
jobnumber    2                   
taskid       1                   
start_time   Mon Dec  7 15:42:04 2026
failed       0    
exit_status  0                   
ru_wallclock 19s
)";
    auto t = gridengine::parseQacct(requeued, "2");
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t.at(0).state, "COMPLETED");
    EXPECT_EQ(t.at(0).end, TaskEnd::Completed);
    EXPECT_EQ(t.at(0).time_used, "19s");
    EXPECT_TRUE(gridengine::parseQacct(requeued, "3").empty());

    t = gridengine::parseQacct(R"(==============================================================
qname        test                
hostname     localhost           
jobnumber    3                   
taskid       2                   
failed       0    
exit_status  130                  (Interrupt)
ru_wallclock 8s
==============================================================
qname        test                
hostname     localhost           
jobnumber    5                   
taskid       1                   
failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit
exit_status  130                  (Interrupt)
ru_wallclock 10s
==============================================================
qname        test                
hostname     localhost           
jobnumber    6                   
taskid       1                   
failed       100 : assumedly after job
exit_status  137                  (Killed)
ru_wallclock 6s
==============================================================
qname        test                
hostname     localhost           
jobnumber    7                   
taskid       4                   
failed       25  : rescheduling
exit_status  0                   
)",
                               "3");
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t.at(1).state, "EXITED");
    EXPECT_EQ(t.at(1).exit_code, "130");
    EXPECT_EQ(t.at(1).end, TaskEnd::Failed);
    const std::string all = R"(==============================================================
jobnumber    5                   
taskid       1                   
failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit
exit_status  130                  (Interrupt)
==============================================================
jobnumber    6                   
taskid       1                   
failed       100 : assumedly after job
exit_status  137                  (Killed)
==============================================================
jobnumber    7                   
taskid       4                   
failed       25  : rescheduling
exit_status  0                   
)";
    EXPECT_EQ(gridengine::parseQacct(all, "5").at(0).end, TaskEnd::TimedOut);
    EXPECT_EQ(gridengine::parseQacct(all, "5").at(0).reason,
              "failed 37: qmaster enforced h_rt, h_cpu, or h_vmem limit");
    EXPECT_EQ(gridengine::parseQacct(all, "6").at(0).end, TaskEnd::Failed);
    EXPECT_EQ(gridengine::parseQacct(all, "6").at(0).exit_code, "137");
    EXPECT_TRUE(gridengine::parseQacct(all, "7").empty());  // it runs again
    EXPECT_TRUE(gridengine::parseQacct("error: job id 99 not found\n", "99").empty());
}

TEST(GridEngine, TerseOutputNamesTheJob) {
    EXPECT_EQ(gridengine::terseJobId("12.1-3:1\n"), "12");
    EXPECT_EQ(gridengine::terseJobId("12\n"), "12");
    EXPECT_EQ(gridengine::terseJobId("Unable to run job: denied\n"), "");
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
