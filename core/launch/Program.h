#pragma once
// A scheduler's client tools as the launchers use them: found on PATH, run without a
// shell (nothing the user typed becomes shell syntax), their output collected.
#include <string>
#include <vector>

namespace ampbench::launch {

/// The program's path when `name` is an executable on PATH; empty when it is not.
std::string findProgram(const std::string& name);

/// What a program said and how it ended.
struct ProgramResult {
    int exit_code = -1;  ///< its exit status; 128+N when signal N ended it; -1 when it never ran
    std::string out;
    std::string err;
    std::string problem;  ///< why it never ran or was stopped (exec failed, timed out)
    bool ok() const { return problem.empty() && exit_code == 0; }
    /// Its own words: stderr, else stdout, trimmed; else `problem`.
    std::string words() const;
};

/// Runs argv[0] (found on PATH) with the arguments as they are, stdin from /dev/null,
/// and collects its output; stops it after `timeout_s`.
ProgramResult runProgram(const std::vector<std::string>& argv, double timeout_s = 60);

/// `text` as one word for a POSIX shell: in single quotes, each ' as '\''.
std::string shellQuote(const std::string& text);

/// `text` without the line breaks and spaces at either end.
std::string trimmed(std::string text);

/// The fields of `line` between `sep`s; a trailing `sep` ends with an empty field.
std::vector<std::string> splitFields(const std::string& line, char sep);

/// The array indices a tool's range names: "3", "3-5", "[3-5,7]", Slurm's "3-9%2"
/// (at most 2 at once), Grid Engine's "1-7:2" (every second); empty for anything else.
std::vector<int> taskIndices(std::string text);

}  // namespace ampbench::launch
