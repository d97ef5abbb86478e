#pragma once
// The check before the first run: the data opens, the model builds (or its file
// loads), and one forward and backward of one micro-batch on the chosen device
// gives an output that fits the task and a finite loss. A spec that fails it
// writes nothing to the database.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::train {

struct SetupProblem {
    enum class Kind {
        Unreadable,  ///< a file is missing, truncated or not what it claims
        Mismatch,    ///< the files are fine but do not fit together or the task
    };
    Kind kind = Kind::Mismatch;
    std::string field;  ///< the spec field to change: "model.file", "data.path", ...
    std::string message;
};

struct SetupReport {
    std::vector<SetupProblem> problems;  ///< empty: the spec can train
    std::vector<std::string> warnings;   ///< trains, but not quite as asked
    std::string device;
    std::string task;   ///< the resolved task
    std::string model;  ///< "model.pt (2.3 MB, CRC-32 1a2b3c4d)" or "built-in cnn"
    int64_t parameters = 0;
    std::vector<std::string> module_tree;  ///< "features.0  Conv2d  864", root first
    std::string data;                      ///< what the dataset says of itself
    int64_t train_size = 0, val_size = 0;
    std::vector<int64_t> sample, target, output;  ///< one sample's shapes (output: a batch's)
    std::vector<std::string> class_names;
    double loss = 0;  ///< of the checked batch
    bool ok() const { return problems.empty(); }
    bool unreadable() const;  ///< some problem is an unreadable file
    /// The problems, one per line ("model.file: ...").
    std::string problemText() const;
    /// One line: model, parameters, data, task.
    std::string summary() const;
};

/// Runs the check; with `run_batch` false only opens the data and the model. With
/// `own_threads` it sets LibTorch's CPU threads to the spec's first, as a run would
/// (a front end about to train); false leaves them to whoever trains meanwhile (the
/// editor's background check).
SetupReport checkSetup(const config::ExperimentSpec& spec, bool run_batch = true,
                       bool own_threads = true);

/// Thrown by runExperiment when the check fails; nothing was written.
class SetupError : public std::runtime_error {
  public:
    explicit SetupError(SetupReport report);
    const SetupReport& report() const { return report_; }

  private:
    SetupReport report_;
};

}  // namespace ampbench::train
