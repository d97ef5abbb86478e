#pragma once
// What a scheduler lets a launch choose, declared once per scheduler (its
// SchedulerInfo): the declaration makes `launch`'s flags, the job file's
// "scheduler_options", a desktop host's stored settings and the fields of its hosts
// dialog, and it checks a value the same way for each of them.
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace ampbench::launch {

enum class OptionKind {
    Text,   ///< one word (a partition, a time limit): `--flag VALUE`
    Count,  ///< a whole number from `min` to `max`; `min` is "not asked for"
    Words,  ///< words passed to the scheduler as they are: `--flag=WORD`, repeated
};

struct LaunchOption {
    std::string key;   ///< "partition": the values' and the job file's name for it
    std::string flag;  ///< "--partition"; options of two schedulers may share one
    OptionKind kind = OptionKind::Text;
    std::string label;        ///< the hosts dialog's label, with its mnemonic ("Pa&rtition:")
    std::string help;         ///< the flag's help
    std::string placeholder;  ///< what leaving it empty means ("the cluster's default")
    int min = 0;              ///< Count's range
    int max = 0;
    /// What is wrong with one value (one word of a Words option), said after the value
    /// ("letters, digits, _.- and commas only"); empty when nothing. Null: any value.
    std::string (*check)(const std::string& value) = nullptr;
};

/// The options given to a launch, by key: one word for Text and Count, any number for
/// Words. An option left out (or a Count at its `min`) is not there.
using OptionValues = std::map<std::string, std::vector<std::string>>;

/// A scheduler as the user meets it: its name, its tools and its options.
struct SchedulerInfo {
    std::string name;   ///< "slurm": `launch --slurm`, the job file's "scheduler"
    std::string title;  ///< "Slurm"
    /// How the runs go to it, after "one job array": "a task per run, ..., submitted
    /// with sbatch --array".
    std::string summary;
    /// The client tools asked about on a host, in the order they are named; launching
    /// needs each of them but the `optional_tools`.
    std::vector<std::string> tools;
    std::vector<std::string> optional_tools;
    std::string query_tool;   ///< "squeue": what a collector asks
    std::string cancel_tool;  ///< "scancel": named in a cancelled run's error
    /// Why each tool is needed, for a host that lacks one ("Launching there needs ...").
    std::string tools_note;
    std::vector<LaunchOption> options;
};

/// The tools launching needs: `tools` but the optional ones.
std::vector<std::string> requiredTools(const SchedulerInfo& info);

/// The option of `info` with this key, or null.
const LaunchOption* findOption(const SchedulerInfo& info, const std::string& key);

/// The one word given for a Text or Count option; empty when it was not given.
std::string optionWord(const OptionValues& values, const std::string& key);
/// A Count option's number; its `min` when it was not given.
int optionCount(const OptionValues& values, const LaunchOption& option);
/// A Words option's words (none when it was not given).
std::vector<std::string> optionWords(const OptionValues& values, const std::string& key);

/// How a problem names the option: by flag for the CLI ("--partition"), by its label
/// for the desktop ("Partition").
enum class Naming { Flag, Label };

/// Each problem of `values` under `info`: a key it does not declare, one word too many,
/// a Count that is no number or out of range, a word its check refuses. The option is
/// named with the value, then what it should be.
std::vector<std::string> checkOptions(const SchedulerInfo& info, const OptionValues& values,
                                      Naming naming);

/// The `launch` arguments that choose `info` with `values`: `--<name>`, then each
/// option in the order declared: `--flag VALUE` (a Count only above its `min`), and
/// `--flag=WORD` for each word of a Words option (a word beginning with "-" is no flag
/// of ours).
std::vector<std::string> launchArguments(const SchedulerInfo& info, const OptionValues& values);

/// `values` as a job file holds them: {"partition": "gpu", "sbatch_options": ["--hold"]}.
nlohmann::json optionsToJson(const SchedulerInfo& info, const OptionValues& values);
/// A job file's "scheduler_options" back; std::invalid_argument naming the key and what
/// it should be (a key `info` does not declare, a value of another type).
OptionValues optionsFromJson(const SchedulerInfo& info, const nlohmann::json& j);

/// The key a desktop stores an option under, beside the host's other settings:
/// "<scheduler>_<key>" ("slurm_partition"); the scheduler's switch is its name.
std::string settingsKey(const SchedulerInfo& info, const LaunchOption& option);
/// An option as one line of text (a field, a stored setting): a Words option's words
/// separated by spaces; and the values of such a line (an empty line sets nothing).
std::string optionText(const OptionValues& values, const LaunchOption& option);
void setOptionText(OptionValues& values, const LaunchOption& option, const std::string& text);

}  // namespace ampbench::launch
