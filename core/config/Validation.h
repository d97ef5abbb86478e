#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// One problem with a spec: which field (a JSON path such as "arms[1].accumulation"),
/// the offending value as text, and what is allowed.
struct FieldError {
    std::string field;
    std::string value;
    std::string message;
    std::string toString() const;  ///< "arms[1].accumulation = 0: must be between 1 and 1024"
};

/// Names are shown in tables, plots and file names: long enough for a description,
/// short enough to lay out.
constexpr size_t kMaxExperimentNameLength = 200;
constexpr size_t kMaxArmNameLength = 64;

/// "arms[2].scaler.init_scale" names arm 2's field "scaler.init_scale": how every
/// front end finds the arm (and the arm's field) an error is about.
struct ArmFieldPath {
    size_t arm = 0;
    std::string field;
};
std::optional<ArmFieldPath> armFieldPath(const std::string& path);

/// A letter, digit or one of _ . + -: what an arm name may hold, and what a file
/// name made from a name keeps.
bool nameChar(char c);

/// Every problem found; empty means the spec may run.
std::vector<FieldError> validate(const ExperimentSpec& spec);

/// A spec validate() found no problem in. Only check() makes one, and its spec cannot
/// be changed after, so a function that takes a ValidSpec need not validate again: a
/// workflow validates once where it starts and hands this on.
class ValidSpec {
  public:
    /// The spec when validate() finds nothing in it; else nullopt, and `errors` holds
    /// every problem.
    static std::optional<ValidSpec> check(const ExperimentSpec& spec,
                                          std::vector<FieldError>& errors);
    const ExperimentSpec& spec() const { return spec_; }

  private:
    explicit ValidSpec(ExperimentSpec spec) : spec_(std::move(spec)) {}
    ExperimentSpec spec_;
};

/// What a spec that may run does that its author may not expect (an arm whose
/// accumulation leaves micro-steps unused). Nothing here stops a run: the CLI
/// prints these and trains, the editor lists them beside the problems.
std::vector<FieldError> warnings(const ExperimentSpec& spec);

/// What the machine offers data-parallel arms: CUDA with its visible GPUs and NCCL,
/// or the CPU with Gloo (the build decides which backends exist).
struct RankCapacity {
    bool cuda = false;
    int gpus = 0;
    bool nccl = false;
    bool gloo = false;
};

/// The arms' `ranks` against the machine: on CUDA every rank needs a GPU of its own
/// (the message names both numbers) and NCCL; on the CPU any count runs as processes
/// over Gloo. Empty when every arm fits.
std::vector<FieldError> checkRanks(const ExperimentSpec& spec, const RankCapacity& machine);

/// How a message names arm `index` of `arms`: "Arm “amp” (row 2)", rows counted
/// from 1; by its row alone ("Arm in row 2") when it has no name or `arms` does
/// not hold it.
std::string armTitle(const std::vector<ArmSpec>& arms, size_t index);

/// A problem as people read it: one about an arm names the arm by its name and
/// row, and the field by its label (`labels`, the editor's) or its JSON key ("Arm
/// “amp” (row 2), accumulation = 0: must be between 1 and 1024"); an arm that a
/// file holds as something other than an object by its place in the file ("Arm 3
/// in the file (not loaded) = 7: expected an object"); the others by their label
/// (`labels`) or as toString().
std::string describe(const FieldError& error, const std::vector<ArmSpec>& arms,
                     bool labels = false);

/// Reading JSON leaves out an arm that is not an object (its error's field is
/// "arms[2]"), so the arms after it load one row up: renumbers the errors of those
/// arms to the rows they loaded into. The left-out arm's error keeps its place in
/// the file.
void renumberArmsAfterLeftOut(std::vector<FieldError>& errors);

}  // namespace ampbench::config
