// The script's set-up check: the interpreter, the ampbench package and the modules the
// script imports, the device and the arms a script cannot train, before anything runs.
#include "core/script/private/ScriptEnvironment.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/analysis/Format.h"
#include "core/config/Placement.h"
#include "core/probe/Environment.h"
#include "core/script/ScriptProcess.h"
#include "core/train/Trainer.h"
#include "core/util/FileKind.h"
#include "core/util/Words.h"

namespace ampbench::script {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// Imports ampbench and torch and looks the other modules up, as a script run started
/// in `folder` would find them; prints each one it cannot have on stderr. Its argv:
/// -c, the folder (may be empty), the modules.
constexpr const char* kImportProbe = R"(import importlib, importlib.util, sys
sys.argv.pop(0)
folder = sys.argv.pop(0)
if folder:
    sys.path.insert(0, folder)
for name in sys.argv:
    try:
        if name in ("ampbench", "torch"):
            importlib.import_module(name)
        elif importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError("No module named %r" % name)
    except BaseException as e:
        text = (str(e).splitlines() or [""])[0]
        sys.stderr.write("ampbench-missing\t%s\t%s: %s\n" % (name, type(e).__name__, text))
)";

constexpr const char* kMissingTag = "ampbench-missing\t";

}  // namespace

InterpreterCheck checkInterpreter(const std::string& python, const std::string& package,
                                  const std::vector<std::string>& modules, double timeout_s,
                                  const std::string& folder) {
    InterpreterCheck out;
    std::vector<std::string> argv{python, "-c", kImportProbe, folder, "ampbench"};
    for (const auto& m : modules) {
        if (m != "ampbench") {
            argv.push_back(m);
        }
    }
    Child child;
    try {
        child = spawn(argv, childEnvironment({}, package));
    } catch (const std::exception& e) {
        out.cannot_start = true;
        out.detail = e.what();
        return out;
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    int status = 0;
    std::string err;
    char buf[4096];
    for (;;) {
        const ssize_t got = read(child.err_fd, buf, sizeof buf);
        if (got > 0) {
            err.append(buf, static_cast<size_t>(got));
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                out.timed_out = true;
                break;
            }
            pollfd p{child.err_fd, POLLIN, 0};
            poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 200)));
            continue;
        }
        break;
    }
    status = endChild(child);  // one that timed out is killed, with all it started
    std::string said;          // what it printed besides the probe's lines
    std::stringstream lines(err);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(kMissingTag, 0) == 0) {
            const std::string rest = line.substr(std::strlen(kMissingTag));
            const size_t tab = rest.find('\t');
            out.missing.push_back(
                {rest.substr(0, tab), tab == std::string::npos ? "" : rest.substr(tab + 1)});
        } else {
            said += line + "\n";
        }
    }
    out.detail = lastLine(said);
    if (out.timed_out) {
        out.missing.clear();
        return out;
    }
    const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    out.cannot_start = !exited_ok && WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
                       err.find("cannot start") == 0;
    if (!exited_ok && !out.cannot_start && out.missing.empty()) {
        // It started and failed before the probe could say what: nothing imports.
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        out.missing.push_back({"ampbench", out.detail.empty()
                                               ? "exited with status " + std::to_string(code)
                                               : out.detail});
    }
    out.ok = exited_ok && out.missing.empty();
    return out;
}

train::SetupReport checkScriptSetup(const config::ExperimentSpec& spec,
                                    const ScriptSettings& settings) {
    using Kind = train::SetupProblem::Kind;
    train::SetupReport r;
    const std::string python = interpreterFor(spec.model, settings.python);
    const std::string file = fs::path(spec.model.file).filename().string();
    r.model = "training script " + (file.empty() ? spec.model.file : file) + ", run by " + python;
    try {
        r.device = settings.device.empty() ? train::resolveDevice(spec.device) : settings.device;
    } catch (const std::exception& e) {
        r.problems.push_back({Kind::Mismatch, "device", e.what()});
    }
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        if (spec.arms[i].ranks > 1) {
            r.problems.push_back(
                {Kind::Mismatch, "arms[" + std::to_string(i) + "].ranks",
                 "a script trains in one process; data-parallel arms are for the built-in "
                 "models"});
        }
    }
    if (const std::string why = scriptFileProblem(spec.model.file); !why.empty()) {
        r.problems.push_back({Kind::Unreadable, "model.file", spec.model.file + ": " + why});
    }
    std::string error;
    if (!util::splitWords(spec.model.args, error)) {
        r.problems.push_back({Kind::Mismatch, "model.args", error});
    }
    const std::string package = settings.package.empty() ? pythonPackageDir() : settings.package;
    std::error_code ec;
    const std::string folder = spec.model.file.empty()
                                   ? std::string()
                                   : fs::absolute(spec.model.file, ec).parent_path().string();
    const std::vector<std::string> modules = scriptImports(spec.model.file);
    const InterpreterCheck check =
        checkInterpreter(python, package, modules, settings.import_timeout_s, folder);
    const std::string script_name = file.empty() ? std::string("the script") : file;
    if (check.cannot_start) {
        r.problems.push_back({Kind::Unreadable, "model.python",
                              python + ": " + check.detail +
                                  " (name the Python interpreter, e.g. /usr/bin/python3)"});
    } else if (check.timed_out) {
        r.problems.push_back(
            {Kind::Mismatch, "model.python",
             python + " did not finish importing ampbench" +
                 (modules.empty() ? std::string()
                                  : " and the modules " + script_name + " imports") +
                 " within " + analysis::formatNumber(settings.import_timeout_s, 0) +
                 " s; check that it starts from a shell (" + python + " -c 'import torch')"});
    }
    for (const auto& m : check.missing) {
        const std::string said = m.error.empty() ? std::string() : " (" + m.error + ")";
        if (m.module == "ampbench") {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import the ampbench package" + said +
                     (package.empty()
                          ? "; no python/ folder with it was found beside the workbench: it is "
                            "installed with the workbench (/usr/lib/python3/dist-packages), or "
                            "put a checkout's python/ folder on PYTHONPATH"
                          : "; the workbench puts " + package +
                                " first on the script's PYTHONPATH for it, and that folder "
                                "lacks ampbench/__init__.py")});
        } else if (m.module == "torch") {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import torch, which " + script_name + " imports" + said +
                     ": install PyTorch for this interpreter (on Debian: apt install "
                     "python3-torch) or name one that has it in model.python"});
        } else {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import " + m.module + ", which " + script_name + " imports" +
                     said + ": install it for this interpreter (on Debian often python3-" +
                     m.module + ", else pip install " + m.module +
                     ") or name one that has it in model.python"});
        }
    }
    if (r.ok()) {
        const auto has = [&modules](const char* name) {
            return std::find(modules.begin(), modules.end(), name) != modules.end();
        };
        const size_t others = modules.size() - (has("torch") ? 1 : 0) - (has("ampbench") ? 1 : 0);
        r.model += std::string(has("torch") ? ", which imports torch and ampbench"
                                            : ", which imports ampbench") +
                   (others > 0 ? " and finds the " + std::to_string(others) +
                                     " other modules the script imports"
                               : std::string());
    }
    return r;
}

}  // namespace ampbench::script
