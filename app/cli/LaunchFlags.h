#pragma once
// `launch`'s scheduler flags, made from each scheduler's declaration
// (launch::SchedulerInfo): `--<name>` chooses it, and each of its options is a flag
// (options of two schedulers with one flag, such as --time-limit, are one flag). No
// scheduler's flag is written by hand.
#include <CLI/CLI.hpp>

#include "cli/Commands.h"

namespace ampbench::cli {

/// Adds the switches and option flags to `launch`, their values going to
/// `o.scheduler_switches` and `o.scheduler_flags`.
void addSchedulerFlags(CLI::App* launch, LaunchOptions& o);
/// Whether `opt` is a scheduler's switch (--slurm), which goes with any other flag.
bool isSchedulerSwitch(const CLI::Option* opt);

/// Sorts what was parsed to the scheduler chosen: `o.scheduler` and its
/// `o.scheduler_options`, checked against its declaration. False after printing why
/// (an option of a scheduler not chosen, a value its declaration refuses).
bool sortSchedulerFlags(LaunchOptions& o);

}  // namespace ampbench::cli
