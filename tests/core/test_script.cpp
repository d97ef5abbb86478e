// A training script as the model (core/script): its arguments as one line of text and
// back, the spec's checks of them, and the check before a script trains naming the
// field to change.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/config/Validation.h"
#include "core/script/ScriptRun.h"
#include "core/util/Words.h"

namespace fs = std::filesystem;
using ampbench::util::joinWords;
using ampbench::util::splitWords;

namespace {

std::vector<std::string> split(const std::string& text) {
    std::string error;
    auto words = splitWords(text, error);
    EXPECT_TRUE(words) << text << ": " << error;
    return words.value_or(std::vector<std::string>{});
}

TEST(ScriptWords, ArgumentsSplitAsAShellWouldWithoutExpansion) {
    using W = std::vector<std::string>;
    EXPECT_EQ(split(""), W{});
    EXPECT_EQ(split("  \t "), W{});
    EXPECT_EQ(split("--epochs 3"), (W{"--epochs", "3"}));
    EXPECT_EQ(split("--name 'two words' x"), (W{"--name", "two words", "x"}));
    EXPECT_EQ(split("\"a \\\"b\\\" $HOME\""), (W{"a \"b\" $HOME"}));
    EXPECT_EQ(split("a\\ b ''"), (W{"a b", ""}));
    EXPECT_EQ(split("--glob=*.py"), (W{"--glob=*.py"}));
    EXPECT_EQ(split("'it'\\''s'"), (W{"it's"}));
}

TEST(ScriptWords, AnUnclosedQuoteOrATrailingBackslashIsNamed) {
    std::string error;
    EXPECT_FALSE(splitWords("--name 'two words", error));
    EXPECT_NE(error.find("single quote at character 8"), std::string::npos) << error;
    EXPECT_FALSE(splitWords("\"x", error));
    EXPECT_NE(error.find("double quote"), std::string::npos) << error;
    EXPECT_FALSE(splitWords("x \\", error));
    EXPECT_NE(error.find("backslash"), std::string::npos) << error;
}

TEST(ScriptWords, JoinedWordsSplitBackToTheSameWords) {
    const std::vector<std::vector<std::string>> cases = {
        {},
        {"--epochs", "3"},
        {"two words", "", "it's", "a\"b", "back\\slash", "$HOME", "tab\there", "new\nline"},
        {"--x=*", "~", "#not-a-comment", "'"},
    };
    for (const auto& words : cases) {
        EXPECT_EQ(split(joinWords(words)), words) << joinWords(words);
    }
    EXPECT_EQ(joinWords({"--epochs", "3"}), "--epochs 3") << "plain words stay as they are";
}

ampbench::config::ExperimentSpec scriptSpec(const std::string& file) {
    ampbench::config::ExperimentSpec s;
    s.model.name = "script";
    s.model.file = file;
    s.device = ampbench::config::DeviceKind::Cpu;
    s.arms.resize(1);
    s.arms[0].name = "fp32";
    return s;
}

TEST(ScriptSpec, ArgumentsThatDoNotSplitAreAnErrorOfModelArgs) {
    auto s = scriptSpec("train.py");
    s.model.args = "--name 'unclosed";
    bool named = false;
    for (const auto& e : ampbench::config::validate(s)) {
        named = named ||
                (e.field == "model.args" && e.message.find("single quote") != std::string::npos);
    }
    EXPECT_TRUE(named);
    s.model.args = "--name 'closed'";
    for (const auto& e : ampbench::config::validate(s)) {
        EXPECT_NE(e.field, "model.args") << e.toString();
    }
}

TEST(ScriptSpec, TheCommandIsTheInterpreterTheScriptAndItsArguments) {
    auto s = scriptSpec("/abs/train.py");
    s.model.args = "--epochs 1 --name 'two words'";
    EXPECT_EQ(ampbench::script::commandLine(s.model, "/usr/bin/python3"),
              (std::vector<std::string>{"/usr/bin/python3", "/abs/train.py", "--epochs", "1",
                                        "--name", "two words"}));
    // The interpreter: the one given, else the spec's, else $AMPBENCH_PYTHON, else python3.
    ::unsetenv("AMPBENCH_PYTHON");
    EXPECT_EQ(ampbench::script::interpreterFor(s.model), "python3");
    ::setenv("AMPBENCH_PYTHON", "/opt/py", 1);
    EXPECT_EQ(ampbench::script::interpreterFor(s.model), "/opt/py");
    s.model.python = "/usr/bin/python3";
    EXPECT_EQ(ampbench::script::interpreterFor(s.model), "/usr/bin/python3");
    EXPECT_EQ(ampbench::script::interpreterFor(s.model, "/given"), "/given");
    ::unsetenv("AMPBENCH_PYTHON");
}

class ScriptSetup : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ampbench-script-" + std::to_string(getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

const ampbench::train::SetupProblem* problemOf(const ampbench::train::SetupReport& r,
                                               const std::string& field) {
    for (const auto& p : r.problems) {
        if (p.field == field) {
            return &p;
        }
    }
    return nullptr;
}

TEST_F(ScriptSetup, AMissingScriptAndAMissingInterpreterAreNamedOnTheirFields) {
    auto s = scriptSpec((dir_ / "nope.py").string());
    s.model.python = (dir_ / "no-python").string();
    const auto r = ampbench::script::checkScriptSetup(s);
    ASSERT_FALSE(r.ok());
    const auto* file = problemOf(r, "model.file");
    ASSERT_TRUE(file);
    EXPECT_NE(file->message.find("nope.py: no such file"), std::string::npos) << file->message;
    const auto* python = problemOf(r, "model.python");
    ASSERT_TRUE(python);
    EXPECT_NE(python->message.find("no-python"), std::string::npos) << python->message;
    // A folder is not a script either.
    s.model.file = dir_.string();
    const auto folder = ampbench::script::checkScriptSetup(s);
    ASSERT_TRUE(problemOf(folder, "model.file"));
    EXPECT_NE(problemOf(folder, "model.file")->message.find("is a folder"), std::string::npos);
}

TEST_F(ScriptSetup, AnInterpreterWithoutTheAmpbenchPackageIsNamed) {
    const fs::path script = dir_ / "train.py";
    std::ofstream(script) << "print('hi')\n";
    auto s = scriptSpec(script.string());
    s.model.python = "/bin/false";  // starts, cannot import anything
    const auto r = ampbench::script::checkScriptSetup(s);
    EXPECT_FALSE(problemOf(r, "model.file"));
    const auto* python = problemOf(r, "model.python");
    ASSERT_TRUE(python);
    EXPECT_NE(python->message.find("cannot import the ampbench package"), std::string::npos)
        << python->message;
}

/// An interpreter that sees no site packages (python3 -S): torch cannot be imported
/// with it whatever this host has installed; PYTHONPATH still reaches it.
fs::path bareInterpreter(const fs::path& dir) {
    const fs::path wrapper = dir / "bare-python";
    std::ofstream(wrapper) << "#!/bin/sh\nexec python3 -S \"$@\"\n";
    fs::permissions(wrapper, fs::perms::owner_all);
    return wrapper;
}

TEST_F(ScriptSetup, TheModulesAScriptImportsAreReadFromItAndItsOwnModules) {
    const fs::path script = dir_ / "train.py";
    std::ofstream(script) << "\"\"\"Doc: import nothing here.\"\"\"\n"
                             "import os, sys as system\n"
                             "import torch.nn as nn\n"
                             "from ampbench import Recorder  # ampbench\n"
                             "from . import sibling\n"
                             "from __future__ import annotations\n"
                             "import helpers\n"
                             "try:\n"
                             "    import optional_thing\n"
                             "except ImportError:\n"
                             "    pass\n";
    std::ofstream(dir_ / "helpers.py") << "import numpy\nimport torch\n";
    EXPECT_EQ(ampbench::script::scriptImports(script.string()),
              (std::vector<std::string>{"os", "sys", "torch", "ampbench", "helpers", "numpy"}));
    EXPECT_TRUE(ampbench::script::scriptImports((dir_ / "none.py").string()).empty());
}

TEST_F(ScriptSetup, AScriptWhoseInterpreterHasNoTorchIsRefusedNamingThePackage) {
    const fs::path script = dir_ / "train.py";
    std::ofstream(script) << "import torch\nimport ampbench\n";
    auto s = scriptSpec(script.string());
    s.model.python = bareInterpreter(dir_).string();
    const auto r = ampbench::script::checkScriptSetup(s);
    ASSERT_FALSE(r.ok());
    const auto* python = problemOf(r, "model.python");
    ASSERT_TRUE(python);
    EXPECT_NE(python->message.find("cannot import torch"), std::string::npos) << python->message;
    EXPECT_NE(python->message.find("No module named 'torch'"), std::string::npos)
        << python->message;
    EXPECT_NE(python->message.find("python3-torch"), std::string::npos) << python->message;
    // The ampbench package comes from the folder the workbench puts on PYTHONPATH.
    for (const auto& p : r.problems) {
        EXPECT_EQ(p.message.find("ampbench package"), std::string::npos) << p.message;
    }
}

TEST_F(ScriptSetup, AnInterpreterThatImportsWhatTheScriptNeedsPasses) {
    const fs::path script = dir_ / "train.py";
    std::ofstream(script) << "import torch\nimport ampbench\nimport json\n";
    ::unsetenv("PYTHONPATH");
    fs::create_directories(dir_ / "site" / "torch");
    std::ofstream(dir_ / "site" / "torch" / "__init__.py") << "\n";
    ampbench::script::ScriptSettings settings;
    settings.package = (dir_ / "site").string();  // a torch of its own, no ampbench
    auto s = scriptSpec(script.string());
    s.model.python = bareInterpreter(dir_).string();
    const auto without = ampbench::script::checkScriptSetup(s, settings);
    const auto* python = problemOf(without, "model.python");
    ASSERT_TRUE(python) << "the ampbench package is missing from that folder";
    EXPECT_NE(python->message.find("cannot import the ampbench package"), std::string::npos)
        << python->message;
    EXPECT_NE(python->message.find("PYTHONPATH"), std::string::npos) << python->message;
    fs::create_directories(dir_ / "site" / "ampbench");
    std::ofstream(dir_ / "site" / "ampbench" / "__init__.py") << "\n";
    const auto with = ampbench::script::checkScriptSetup(s, settings);
    EXPECT_TRUE(with.ok()) << (with.problems.empty() ? "" : with.problems[0].message);
    EXPECT_NE(with.model.find("torch"), std::string::npos) << with.model;
}

TEST_F(ScriptSetup, AnInterpreterThatHangsIsStoppedAfterTheTimeout) {
    const fs::path hang = dir_ / "hang-python";
    std::ofstream(hang) << "#!/bin/sh\nexec sleep 30\n";
    fs::permissions(hang, fs::perms::owner_all);
    const auto started = std::chrono::steady_clock::now();
    const auto check = ampbench::script::checkInterpreter(hang.string(), "", {"torch"}, 1.0);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_FALSE(check.ok);
    EXPECT_TRUE(check.timed_out);
    EXPECT_LT(took, 10.0);
}

TEST_F(ScriptSetup, DataParallelArmsAreRefusedOnTheirRanks) {
    const fs::path script = dir_ / "train.py";
    std::ofstream(script) << "\n";
    auto s = scriptSpec(script.string());
    s.arms[0].ranks = 2;
    const auto r = ampbench::script::checkScriptSetup(s);
    ASSERT_TRUE(problemOf(r, "arms[0].ranks"));
    EXPECT_NE(problemOf(r, "arms[0].ranks")->message.find("one process"), std::string::npos);
}

}  // namespace

// Script runs train one at a time unless runs_per_gpu or more than one GPU packs them:
// on the CPU runs_per_gpu scripts at once; on CUDA over min(spec.gpus or all, visible).
TEST(ScriptPacking, RunsPackOnlyWhenRunsPerGpuOrSeveralGpusAllowIt) {
    ampbench::config::ExperimentSpec spec;
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cpu", 0), 0) << "one at a time by default";
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 1), 0);
    spec.runs_per_gpu = 3;
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cpu", 4), 1) << "the CPU is one group of slots";
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 0), 1) << "no count: one GPU";
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 4), 4);
    spec.gpus = 2;
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 4), 2) << "the spec's gpus limit them";
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 1), 1) << "no more than are visible";
    spec.runs_per_gpu = 1;
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cuda:0", 4), 2) << "a run per GPU, side by side";
    EXPECT_EQ(ampbench::script::packedGpus(spec, "cpu", 4), 0)
        << "spec.gpus means nothing on the CPU";
}
