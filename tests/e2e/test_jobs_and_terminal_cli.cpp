// Launched jobs, their files and what reaches a terminal, through the real CLI: links
// planted in the jobs folder, job files naming another process or holding the wrong
// types, a FIFO for a job file, waiting flags out of range, a rerun of a run still
// training, a temporary file left by a killed write, tampered stored records, the
// summary's runs, and escape sequences in ingested streams.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "Shell.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kJobsCli = AMPBENCH_CLI_PATH;
// A one-arm experiment on synthetic data that trains in about a second.
const std::string kJobsSpec =
    "--dataset synthetic-images --model mlp --width 32 --micro-batch 32 --warmup 1 "
    "--eval-interval 0 --eval-batches 2";

std::string jobsQuote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string jobsRead(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void jobsWrite(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// Field 22 of /proc/PID/stat: the start time the job files record with a pid.
long long jobsStartOf(pid_t pid) {
    const std::string text = jobsRead("/proc/" + std::to_string(pid) + "/stat");
    std::istringstream rest(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 22; ++i) {
        rest >> field;
    }
    return std::atoll(field.c_str());
}

mode_t jobsModeOf(const std::string& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st.st_mode & 0777;
}

/// A terminal sees none of these: ESC, BEL, a C1 control (raw or as UTF-8), or a
/// byte that is not UTF-8 (0xFF never is).
bool jobsHasRawControl(const std::string& text) {
    return text.find('\x1b') != std::string::npos || text.find('\x07') != std::string::npos ||
           text.find("\xC2\x9B") != std::string::npos || text.find('\x9B') != std::string::npos ||
           text.find('\xFF') != std::string::npos;
}

class JobsAndTerminalCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ampbench-jobs-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "r.db").string();
        jobs_ = db_ + ".jobs";
    }
    void TearDown() override {
        for (pid_t pid : children_) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        fs::remove_all(dir_);
    }
    /// The CLI on this test's database; a hang fails in 60 s instead of never.
    ampbench::test::ShellResult cli(const std::string& args) const {
        return ampbench::test::shell("cd " + jobsQuote(dir_.string()) + " && timeout 60 " +
                                     kJobsCli + " --db " + jobsQuote(db_) + " " + args);
    }
    void trainSmall(const std::string& arms = "--arm f=fp32 --seeds 1") {
        const auto r = cli("run " + kJobsSpec + " --micro-steps 8 " + arms + " -q");
        ASSERT_EQ(r.code, 0) << r.out;
    }
    /// Starts `argv` (argv[0] a path) without waiting, its output in `log`.
    pid_t start(const std::vector<std::string>& argv, const std::string& log) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            std::freopen(log.c_str(), "w", stderr);
            std::freopen("/dev/null", "w", stdout);
            std::vector<char*> args;
            for (const auto& a : argv) {
                args.push_back(const_cast<char*>(a.c_str()));
            }
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        children_.push_back(pid);
        return pid;
    }
    void makeJobsFolder() const {
        ASSERT_EQ(::mkdir(jobs_.c_str(), 0700), 0);
        ASSERT_EQ(::chmod(jobs_.c_str(), 0700), 0);
    }
    /// Waits until experiment `id` is no longer running, per `status --json`.
    json waitUntilEnded(int64_t id) const {
        json job;
        for (int i = 0; i < 600; ++i) {
            const auto r = cli("status --json --experiment " + std::to_string(id));
            job = json::parse(r.out, nullptr, false);
            if (!job.is_discarded() && job["jobs"][0]["state"] != "running") {
                return job["jobs"][0];
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return job;
    }
    void sql(const std::string& statement) const {
        sqlite3* raw = nullptr;
        ASSERT_EQ(sqlite3_open(db_.c_str(), &raw), SQLITE_OK);
        char* error = nullptr;
        const int rc = sqlite3_exec(raw, statement.c_str(), nullptr, nullptr, &error);
        const std::string message = error ? error : "";
        sqlite3_free(error);
        sqlite3_close(raw);
        ASSERT_EQ(rc, SQLITE_OK) << message;
    }

    fs::path dir_;
    std::string db_, jobs_;
    std::vector<pid_t> children_;
};

}  // namespace

// A link planted at any name the job writes (its log, its job file, its lock) is
// replaced, never written through: what it points to stays as it was, and the
// job's files are private (0600, in a 0700 folder).
TEST_F(JobsAndTerminalCli, LaunchNeverWritesThroughALinkPlantedInTheJobsFolder) {
    makeJobsFolder();
    std::vector<std::string> victims;
    for (const char* name : {"launch-log", "job-file", "job-log", "job-lock"}) {
        victims.push_back((dir_ / name).string());
        jobsWrite(victims.back(), "precious\n");
    }
    ASSERT_EQ(::symlink(victims[1].c_str(), (jobs_ + "/1.json").c_str()), 0);
    ASSERT_EQ(::symlink(victims[2].c_str(), (jobs_ + "/1.log").c_str()), 0);
    ASSERT_EQ(::symlink(victims[3].c_str(), (jobs_ + "/1.lock").c_str()), 0);
    // The launcher's own log is named by its pid: the link goes in between fork
    // and exec, once that pid is known.
    int gate[2];
    ASSERT_EQ(::pipe(gate), 0);
    const std::string out = (dir_ / "launch.out").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(gate[1]);
        char byte;
        if (::read(gate[0], &byte, 1) != 1) {
            ::_exit(126);
        }
        const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        const std::string cmd = "exec " + kJobsCli + " --db " + jobsQuote(db_) + " launch " +
                                kJobsSpec + " --micro-steps 20 --arm f=fp32 --seeds 1";
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(gate[0]);
    ASSERT_EQ(
        ::symlink(victims[0].c_str(), (jobs_ + "/launch-" + std::to_string(pid) + ".log").c_str()),
        0);
    ASSERT_EQ(::write(gate[1], "x", 1), 1);
    ::close(gate[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << jobsRead(out);
    const json job = waitUntilEnded(1);
    EXPECT_EQ(job["state"], "finished") << job.dump();
    for (const auto& v : victims) {
        EXPECT_EQ(jobsRead(v), "precious\n") << v << " was written through a link";
    }
    for (const char* name : {"/1.json", "/1.log"}) {
        const std::string path = jobs_ + name;
        EXPECT_FALSE(fs::is_symlink(path)) << path;
        EXPECT_TRUE(fs::is_regular_file(path)) << path;
        EXPECT_EQ(jobsModeOf(path), 0600u) << path;
    }
    EXPECT_EQ(jobsModeOf(jobs_), 0700u);
    EXPECT_NE(jobsRead(jobs_ + "/1.log").find("experiment 1"), std::string::npos);
}

// A jobs folder that is a link, or that others may write into, is refused by name
// before anything is written or signalled (exit 6).
TEST_F(JobsAndTerminalCli, AJobsFolderThatIsALinkOrOpenToOthersIsRefusedByName) {
    const fs::path elsewhere = dir_ / "elsewhere";
    fs::create_directories(elsewhere);
    ASSERT_EQ(::symlink(elsewhere.c_str(), jobs_.c_str()), 0);
    auto r = cli("launch " + kJobsSpec + " --micro-steps 8 --arm f=fp32 --seeds 1");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find(jobs_), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("symbolic link"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing was written through the link";

    fs::remove(jobs_);
    ASSERT_EQ(::mkdir(jobs_.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(jobs_.c_str(), 0777), 0);
    r = cli("launch " + kJobsSpec + " --micro-steps 8 --arm f=fp32 --seeds 1");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find("other users can write into it (mode 0777)"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_empty(jobs_));
    r = cli("status");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find(jobs_), std::string::npos) << r.out;
    r = cli("cancel --experiment 1");
    EXPECT_EQ(r.code, 6) << r.out;
    EXPECT_NE(r.out.find("nothing was signalled"), std::string::npos) << r.out;
}

// A job file that names a live process which is not the job (a reused pid, a
// tampered file) makes `cancel` refuse and signal nothing; the process lives on.
TEST_F(JobsAndTerminalCli, CancelSignalsNothingWhenTheJobFileNamesAnotherProcess) {
    ampbench::store::Database::open(db_);  // an empty database
    // It lives until this test ends it, however long the checks take.
    const pid_t other = start({"/bin/sleep", "infinity"}, (dir_ / "sleep.log").string());
    const struct Ended {
        pid_t pid;
        ~Ended() {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    } ended{other};
    long long started = 0;
    ampbench::test::eventually([&] { return (started = jobsStartOf(other)) > 0; },
                               ampbench::test::kPatience, std::chrono::milliseconds(10));
    ASSERT_GT(started, 0);
    makeJobsFolder();
    jobsWrite(jobs_ + "/1.json", json{{"experiment_id", 1},
                                      {"pid", other},
                                      {"pid_start", started},
                                      {"log", jobs_ + "/1.log"},
                                      {"runs", 1},
                                      {"started_at", 0}}
                                     .dump());
    const auto r = cli("cancel --experiment 1");
    EXPECT_EQ(r.code, 5) << r.out;
    EXPECT_NE(r.out.find("is not experiment 1's job"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing was signalled"), std::string::npos) << r.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(::waitpid(other, nullptr, WNOHANG), 0) << "the unrelated process was signalled";
    const auto s = cli("status --json --experiment 1");
    EXPECT_EQ(s.code, 0) << s.out;
    EXPECT_NE(json::parse(s.out)["jobs"][0]["state"], "running") << s.out;
}

// A FIFO for a job file is refused at once (no read that waits for a writer), and a
// job file with a field of the wrong type or that is not JSON is named with its
// field: exit 6, never a JSON library's exception.
TEST_F(JobsAndTerminalCli, AJobFileThatIsAFifoOrHasWrongTypesIsNamedAtOnce) {
    ampbench::store::Database::open(db_);  // an empty database
    makeJobsFolder();
    const std::string file = jobs_ + "/1.json";
    ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
    const auto before = std::chrono::steady_clock::now();
    for (const std::string& args : {std::string("status"), std::string("status --experiment 1"),
                                    std::string("cancel --experiment 1")}) {
        const auto r = cli(args);
        // status names the file and goes on; cancel signals nothing
        EXPECT_EQ(r.code, args.rfind("status", 0) == 0 ? 0 : 6) << args << ": " << r.out;
        EXPECT_NE(r.out.find(file + ": it is a FIFO (named pipe), not a regular file"),
                  std::string::npos)
            << args << ": " << r.out;
    }
    // At once, not after a wait for a writer (each command ends in 60 s at most).
    EXPECT_LT(std::chrono::steady_clock::now() - before, ampbench::test::kPatience);

    fs::remove(file);
    const struct {
        std::string text, said;
    } cases[] = {
        {R"({"experiment_id": 1, "pid": "x", "pid_start": 5})",
         file + ": \"pid\" is a string (\"x\"), expected a process id from 1 up"},
        {R"({"experiment_id": 1, "pid": 7, "pid_start": [1]})", "\"pid_start\" is a JSON array"},
        {R"({"experiment_id": 1, "pid": 7, "pid_start": 9, "log": 3})",
         "\"log\" is a whole number (3), expected a string"},
        {R"({"experiment_id": 1, "pid": 7, "pid_start": 9, "exit_code": "0"})",
         "\"exit_code\" is a string"},
        {R"({"experiment_id": 2, "pid": 7, "pid_start": 9})", "the file is experiment 1's"},
        {"{\"experiment_id\": 1, \"pid", file + " is not a JSON object (it does not parse)"},
    };
    for (const auto& c : cases) {
        jobsWrite(file, c.text);
        for (const std::string& args :
             {std::string("status"), std::string("cancel --experiment 1")}) {
            const auto r = cli(args);
            EXPECT_EQ(r.code, args == "status" ? 0 : 6) << c.text << ": " << r.out;
            EXPECT_NE(r.out.find(c.said), std::string::npos) << c.text << ": " << r.out;
            EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;
        }
    }
}

// A damaged job file beside a good one: `status` names the file and what is wrong
// with it, lists every other job and exits 0; `cancel` of the damaged one names it
// and signals nothing.
TEST_F(JobsAndTerminalCli, ADamagedJobFileIsNamedAndEveryOtherJobIsStillListed) {
    trainSmall();
    makeJobsFolder();
    jobsWrite(jobs_ + "/1.json",
              R"({"experiment_id": 1, "pid": 1, "pid_start": 5, "log": "1.log", "runs": 1,)"
              R"( "started_at": 1, "exit_code": 0, "ended_at": 2})");
    const std::string string_pid = jobs_ + "/2.json", not_json = jobs_ + "/3.json";
    jobsWrite(string_pid, R"({"experiment_id": 2, "pid": "4242", "pid_start": 5})");
    jobsWrite(not_json, "not json {");
    const std::string pid_said = string_pid + ": \"pid\" is a string (\"4242\")";
    const std::string parse_said = not_json + " is not a JSON object (it does not parse)";

    auto r = cli("status");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("experiment 1 'fashion-mnist-amp': finished"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("run 1 f"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("experiment 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(pid_said), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(parse_said), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;

    r = cli("status --json");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("status: job file " + pid_said), std::string::npos) << r.out;
    // stderr's lines first, then the JSON on one line
    const json j = json::parse(r.out.substr(r.out.find("{\"jobs\"")), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    ASSERT_EQ(j["jobs"].size(), 3u) << r.out;
    EXPECT_EQ(j["jobs"][0]["state"], "finished");
    EXPECT_FALSE(j["jobs"][0].contains("job_file_problem"));
    EXPECT_EQ(j["jobs"][0]["runs"].size(), 1u);
    for (int i : {1, 2}) {
        EXPECT_EQ(j["jobs"][i]["state"], "unknown") << j["jobs"][i];
        EXPECT_NE(j["jobs"][i].value("job_file_problem", "").find(i == 1 ? pid_said : parse_said),
                  std::string::npos)
            << j["jobs"][i];
    }
    r = cli("status --experiment 2");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(pid_said), std::string::npos) << r.out;

    for (const std::string& id : {std::string("2"), std::string("3")}) {
        r = cli("cancel --experiment " + id);
        EXPECT_NE(r.code, 0) << r.out;
        EXPECT_NE(r.out.find(id == "2" ? pid_said : parse_said), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("nothing was signalled"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;
    }
}

// --wait and --timeout take seconds above 0 up to seven days; inf, nan, negative,
// zero and 1e300 are refused naming the flag and the range, before anything starts.
TEST_F(JobsAndTerminalCli, WaitingFlagsTakeOnlyFiniteSecondsUpToSevenDays) {
    for (const char* value : {"inf", "nan", "-1", "0", "1e300", "604801", "ten"}) {
        auto r = cli(std::string("launch ") + kJobsSpec + " --micro-steps 8 --wait " + value);
        EXPECT_EQ(r.code, 2) << value << ": " << r.out;
        EXPECT_NE(r.out.find("--wait"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("at most 604800 (7 days)"), std::string::npos) << r.out;
        r = cli(std::string("cancel --experiment 1 --timeout ") + value);
        EXPECT_EQ(r.code, 2) << value << ": " << r.out;
        EXPECT_NE(r.out.find("--timeout"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("at most 604800 (7 days)"), std::string::npos) << r.out;
    }
    EXPECT_FALSE(fs::exists(jobs_)) << "nothing was launched";
    EXPECT_FALSE(fs::exists(db_));
}

// A rerun of a run that another process is still training is refused (exit 7, with
// --force named) and adds nothing.
TEST_F(JobsAndTerminalCli, ARerunOfARunStillTrainingIsRefused) {
    const std::string log = (dir_ / "run.log").string();
    start({kJobsCli,          "--db", db_,       "run",    "--dataset",     "synthetic-images",
           "--model",         "mlp",  "--width", "32",     "--micro-batch", "32",
           "--seeds",         "1",    "--arm",   "f=fp32", "--micro-steps", "1000000",
           "--eval-interval", "0",    "-q"},
          log);
    bool running = false;
    for (int i = 0; i < 600 && !running; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        try {
            auto db =
                ampbench::store::Database::open(db_, ampbench::store::Database::Mode::ReadOnly);
            const auto runs = db->runs();
            running = !runs.empty() && runs[0].status == ampbench::run::RunStatus::Running;
        } catch (const std::exception&) {
        }
    }
    ASSERT_TRUE(running) << jobsRead(log);
    const auto r = cli("rerun 1 -q");
    EXPECT_EQ(r.code, 7) << r.out;
    EXPECT_NE(r.out.find("run 1 is still training in another process"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--force"), std::string::npos) << r.out;
    auto db = ampbench::store::Database::open(db_, ampbench::store::Database::Mode::ReadOnly);
    EXPECT_EQ(db->runs().size(), 1u) << "the refused rerun added no run";
}

// The temporary file of a write killed before its rename (kill -9 during `export`)
// is removed by the next write to the same file once its writer is gone; one whose
// writer lives, and other files, stay.
TEST_F(JobsAndTerminalCli, TheNextWriteRemovesTheTemporaryFileOfAWriterThatDied) {
    trainSmall();
    const pid_t dead = ::fork();
    if (dead == 0) {
        ::_exit(0);
    }
    ::waitpid(dead, nullptr, 0);
    const std::string stale = (dir_ / (".out.csv." + std::to_string(dead) + "-1.tmp")).string();
    const std::string live =
        (dir_ / (".out.csv." + std::to_string(::getpid()) + "-1.tmp")).string();
    const std::string other = (dir_ / ".out.csv.notes").string();
    for (const auto& path : {stale, live, other}) {
        jobsWrite(path, "partial");
    }
    const auto r = cli("export 1 --csv out.csv");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_FALSE(fs::exists(stale)) << "left by a dead writer";
    EXPECT_TRUE(fs::exists(live)) << "its writer still runs";
    EXPECT_TRUE(fs::exists(other));
    EXPECT_GT(fs::file_size(dir_ / "out.csv"), 0u);
    int temporaries = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
        const std::string name = e.path().filename().string();
        temporaries += name.rfind(".out.csv.", 0) == 0 && name.size() > 4 &&
                       name.compare(name.size() - 4, 4, ".tmp") == 0;
    }
    EXPECT_EQ(temporaries, 1) << "only the live writer's";
}

// A run's stored arm (runs.spec_json) or experiment spec that was tampered with is
// named with its run or table and field, exit 4, in every command that reads it.
TEST_F(JobsAndTerminalCli, TamperedStoredSpecsGiveExitFourNamingRunAndField) {
    trainSmall("--arm f=fp32 --arm g=fp32 --seeds 1");
    sql("UPDATE runs SET spec_json = 'not json' WHERE id = 1;"
        "UPDATE runs SET spec_json = '{\"name\": \"g\", \"accumulation\": \"x\"}' WHERE id = 2;");
    const std::string run1 = "run 1's stored arm (runs.spec_json) is not JSON";
    const std::string run2 = "run 2's stored arm (runs.spec_json): accumulation = \"x\"";
    const struct {
        std::string args, said;
    } cases[] = {{"show 1", run1},
                 {"show 2", run2},
                 {"show -e 1", run1},
                 {"show -e 1 --json", run2},
                 {"report 1 --json o.json", run1},
                 {"rerun 1 -q", run1},
                 {"rerun 2 -q", run2}};
    for (const auto& c : cases) {
        const auto r = cli(c.args);
        EXPECT_EQ(r.code, 4) << c.args << ": " << r.out;
        EXPECT_NE(r.out.find(c.said), std::string::npos) << c.args << ": " << r.out;
        EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << c.args << ": " << r.out;
    }
    EXPECT_FALSE(fs::exists(dir_ / "o.json"));
    sql("UPDATE experiments SET spec_json = '{\"model\": 5}';"
        "UPDATE runs SET spec_json = (SELECT spec_json FROM runs WHERE id = 2) WHERE id = 1;");
    for (const std::string& args : {std::string("rerun 2 -q"), std::string("find-batch "
                                                                           "--experiment 1")}) {
        const auto r = cli(args);
        EXPECT_EQ(r.code, 4) << args << ": " << r.out;
        EXPECT_NE(r.out.find("experiments.spec_json"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("model = 5"), std::string::npos) << r.out;
    }
    auto db = ampbench::store::Database::open(db_, ampbench::store::Database::Mode::ReadOnly);
    EXPECT_EQ(db->runs().size(), 2u) << "nothing was run";
}

// A run's record of its files (runs.inputs_json) with a field of the wrong type, or a
// seed out of range, is named with its field (exit 4) and nothing is run; before, the
// first gave a raw [json.exception.type_error.302] (exit 1) and a seed of -1 was rerun
// as 18446744073709551615.
TEST_F(JobsAndTerminalCli, ATamperedRecordOfFilesOrSeedIsNamedAndNothingIsRerun) {
    trainSmall();
    sql("UPDATE runs SET inputs_json = '[{\"kind\":\"file\",\"path\":7}]';");
    auto r = cli("rerun 1 -q");
    EXPECT_EQ(r.code, 4) << r.out;
    EXPECT_NE(r.out.find("run 1's record of its files (runs.inputs_json): [0].path = 7: expected "
                         "a string; nothing was run"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;
    r = cli("show 1");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("files       cannot be read"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("json.exception"), std::string::npos) << r.out;
    sql("UPDATE runs SET inputs_json = '[{\"field\":\"data.path\",\"files\":\"many\"}]';");
    r = cli("rerun 1 -q");
    EXPECT_EQ(r.code, 4) << r.out;
    EXPECT_NE(r.out.find("[0].files = \"many\": expected a whole number"), std::string::npos)
        << r.out;
    sql("UPDATE runs SET inputs_json = '', seed = -1;");
    r = cli("rerun 1 -q");
    EXPECT_EQ(r.code, 4) << r.out;
    EXPECT_NE(r.out.find("run 1's seed (runs.seed) reads -1: a seed is a whole number from 0 to "
                         "9223372036854775807; nothing was run"),
              std::string::npos)
        << r.out;
    auto db = ampbench::store::Database::open(db_, ampbench::store::Database::Mode::ReadOnly);
    EXPECT_EQ(db->runs().size(), 1u) << "nothing was rerun";
}

// `show -e` takes its figures from the finished runs only, as the verdict does: an
// arm whose runs were all cancelled shows dashes, not "0.00×".
TEST_F(JobsAndTerminalCli, ShowExperimentLeavesCancelledRunsOutOfItsFigures) {
    trainSmall("--arm f=fp32 --arm g=fp32 --seeds 1 2");
    sql("UPDATE runs SET status = 'cancelled' WHERE arm = 'g';"
        "UPDATE runs SET status = 'cancelled' WHERE arm = 'f' AND seed = 2;");
    const auto r = cli("show -e 1");
    EXPECT_EQ(r.code, 0) << r.out;
    std::istringstream lines(r.out);
    std::string line, f, g;
    while (std::getline(lines, line)) {
        if (line.rfind("f ", 0) == 0) {
            f = line;
        }
        if (line.rfind("g ", 0) == 0) {
            g = line;
        }
    }
    EXPECT_NE(f.find(" 1/2 "), std::string::npos) << r.out;
    EXPECT_NE(f.find("1.00\xC3\x97"), std::string::npos) << r.out;
    EXPECT_NE(g.find(" 0/2 "), std::string::npos) << r.out;
    EXPECT_EQ(g.find("0.00\xC3\x97"), std::string::npos) << r.out;
    EXPECT_EQ(g.find("ms"), std::string::npos) << "no figure without a finished run: " << g;
    EXPECT_EQ(g.find("MiB"), std::string::npos) << g;
}

// Escape sequences in an ingested stream (an experiment's created_at, a run's
// started_at and ended_at, its environment) and bytes that are not UTF-8 in the
// file reach the terminal as \xNN text through `list`, `show` and `status`.
TEST_F(JobsAndTerminalCli, StoredStringsReachTheTerminalEscaped) {
    const std::string source = (dir_ / "source.db").string();
    auto r = ampbench::test::shell(kJobsCli + " --db " + jobsQuote(source) + " run " + kJobsSpec +
                                   " --micro-steps 8 --arm f=fp32 --seeds 1 -q");
    ASSERT_EQ(r.code, 0) << r.out;
    r = ampbench::test::shell(kJobsCli + " --db " + jobsQuote(source) +
                              " tail --experiment 1 --stream");
    ASSERT_EQ(r.code, 0) << r.out;
    std::istringstream lines(r.out);
    std::string line, stream;
    while (std::getline(lines, line)) {
        json j = json::parse(line);
        if (j["type"] == "experiment") {
            j["created_at"] = "2026\x1b]0;owned\x07-01";
        } else if (j["type"] == "run") {
            j["started_at"] = "\x1b[2J";
            j["ended_at"] =
                "\xC2\x9B"
                "31m";
            json env = json::parse(j["env_json"].get<std::string>());
            env["cpu_model"] = "\x1b[8mhidden";
            env["device_name"] = "\x1b[31mGPU";
            env["libtorch_version"] = "1\x1b[1A";
            env["ampbench_version"] = "0\x1b[K";
            j["env_json"] = env.dump();
        }
        stream += j.dump() + "\n";
    }
    jobsWrite((dir_ / "evil.jsonl").string(), stream);
    r = cli("ingest evil.jsonl");
    ASSERT_EQ(r.code, 0) << r.out;
    sql("UPDATE runs SET error = 'bad \xFF\xFE byte', label = 'x\x1b[5m';");
    for (const std::string& args : {std::string("list"), std::string("show 1")}) {
        r = cli(args);
        EXPECT_EQ(r.code, 0) << args << ": " << r.out;
        EXPECT_FALSE(jobsHasRawControl(r.out)) << args << ": " << r.out;
        EXPECT_NE(r.out.find("\\x1B"), std::string::npos) << args << ": " << r.out;
    }
    EXPECT_NE(cli("list").out.find("2026\\x1B]0;owned\\x07-01"), std::string::npos);
    const auto show = cli("show 1").out;
    for (const char* shown : {"started     \\x1B[2J", "ended       \\x9B31m", "\\x1B[8mhidden",
                              "bad \\xFF\\xFE byte", "0\\x1B[K"}) {
        EXPECT_NE(show.find(shown), std::string::npos) << shown << " in " << show;
    }
}

// Bidirectional controls in a name (a right-to-left override that reorders the rest of
// the terminal line, isolates, marks) are stored byte for byte and reach the terminal
// escaped as \uXXXX through `list` and `show`, as control characters do.
TEST_F(JobsAndTerminalCli, BidirectionalControlsInNamesReachTheTerminalEscaped) {
    const std::string source = (dir_ / "source.db").string();
    auto r = ampbench::test::shell(kJobsCli + " --db " + jobsQuote(source) + " run " + kJobsSpec +
                                   " --micro-steps 8 --arm f=fp32 --seeds 1 -q");
    ASSERT_EQ(r.code, 0) << r.out;
    r = ampbench::test::shell(kJobsCli + " --db " + jobsQuote(source) +
                              " tail --experiment 1 --stream");
    ASSERT_EQ(r.code, 0) << r.out;
    // U+202E (right-to-left override), U+2066 and U+2069 (an isolate), U+200F, U+061C.
    const std::string experiment = "exp\u202Egpj.exe";
    const std::string arm = "f\u2066x\u2069\u200F\u061C";
    std::istringstream lines(r.out);
    std::string line, stream;
    while (std::getline(lines, line)) {
        json j = json::parse(line);
        if (j["type"] == "experiment") {
            j["name"] = experiment;
        } else if (j["type"] == "run") {
            j["arm"] = arm;
            json planned = json::parse(j["spec_json"].get<std::string>());
            planned["name"] = arm;
            j["spec_json"] = planned.dump();
        }
        stream += j.dump() + "\n";
    }
    jobsWrite((dir_ / "bidi.jsonl").string(), stream);
    r = cli("ingest bidi.jsonl");
    ASSERT_EQ(r.code, 0) << r.out;
    {
        auto db = ampbench::store::Database::open(db_, ampbench::store::Database::Mode::ReadOnly);
        EXPECT_EQ(db->runs().at(0).arm, arm) << "stored byte for byte";
        EXPECT_EQ(db->runs().at(0).experiment_name, experiment);
    }
    for (const std::string& args : {std::string("list"), std::string("show 1")}) {
        r = cli(args);
        EXPECT_EQ(r.code, 0) << args << ": " << r.out;
        for (const char* raw : {"\u202E", "\u2066", "\u2069", "\u200F", "\u061C"}) {
            EXPECT_EQ(r.out.find(raw), std::string::npos) << args << ": raw " << r.out;
        }
        EXPECT_NE(r.out.find("\\u202E"), std::string::npos) << args << ": " << r.out;
        EXPECT_NE(r.out.find("f\\u2066x\\u2069\\u200F\\u061C"), std::string::npos)
            << args << ": " << r.out;
    }
}
