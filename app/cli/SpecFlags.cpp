#include "cli/SpecFlags.h"

#include <charconv>
#include <cstdlib>
#include <string>

#include "core/config/SpecFields.h"

namespace ampbench::cli {
namespace {

using config::ExperimentSpec;
using config::FlatField;
using config::ValueKind;

const FlatField<ExperimentSpec>& fieldOf(const SpecFlag& flag) {
    const auto* f = config::findField<ExperimentSpec>(flag.path);
    if (!f) {
        throw std::logic_error(std::string("flag ") + flag.names + ": no spec field " + flag.path);
    }
    return *f;
}

bool wholeNumber(const std::string& text, int64_t& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

bool realNumber(const std::string& text, double& out) {
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && end == text.c_str() + text.size();
}

/// "one of a, b, c"
std::string choiceText(const std::vector<std::string>& choices) {
    std::string text;
    for (const auto& c : choices) {
        text += (text.empty() ? "" : ", ") + c;
    }
    return text;
}

/// The flag's value as its field takes it, or an error message.
std::string parse(const FlatField<ExperimentSpec>& f, const std::string& text,
                  config::FieldValue& out) {
    switch (f.kind) {
        case ValueKind::Int: {
            int64_t v = 0;
            if (!wholeNumber(text, v)) {
                return "must be a whole number";
            }
            out = v;
            return {};
        }
        case ValueKind::Double: {
            double v = 0;
            if (!realNumber(text, v)) {
                return "must be a number";
            }
            out = v;
            return {};
        }
        case ValueKind::Choice:
            for (const auto& c : f.choices) {
                if (c == text) {
                    out = text;
                    return {};
                }
            }
            return "must be one of " + choiceText(f.choices);
        case ValueKind::Text:
            out = text;
            return {};
        default:
            return "cannot be set from the command line";
    }
}

}  // namespace

const std::vector<SpecFlag>& specFlags() {
    static const std::vector<SpecFlag> flags = {
        {"--micro-steps,--steps", "micro_steps",
         "micro-batches per run (every arm sees the same samples; an arm with accumulation K "
         "makes micro-steps / K optimizer steps)"},
        {"--epochs", "epochs", "whole passes over the training part (overrides --micro-steps)"},
        {"--micro-batch", "micro_batch"},
        {"--lr", "optimizer.lr"},
        {"--optimizer", "optimizer.kind"},
        {"--weight-decay", "optimizer.weight_decay"},
        {"--task", "model.task"},
        {"--width", "model.width"},
        {"--depth", "model.depth"},
        {"--labels", "data.labels", "labels .npy beside an inputs .npy given to --data"},
        {"--val-data", "data.val_path",
         "validation data in the format of --data (default: a seeded fraction)"},
        {"--device", "device"},
        {"--tolerance-margin", "tolerance_margin"},
        {"--deterministic", "deterministic"},
        {"--fast-verdict", "fast_verdict"},
        {"--cudnn-benchmark", "cudnn_benchmark",
         "let cuDNN autotune its kernels: auto (on; off under the fast verdict), true or false"},
        {"--fuse-seeds", "fuse_seeds",
         "train each arm's seeds as one fused model (built-in cnn and mlp; each seed still its "
         "own run; default: under --fast-verdict)",
         "--no-fuse-seeds"},
        {"--threads", "cpu_threads"},
        {"--warmup", "warmup_steps"},
        {"--eval-interval", "eval_interval"},
        {"--eval-batches", "eval_batches"},
        {"--runs-per-gpu", "runs_per_gpu",
         "runs one GPU trains at once (CUDA; a --script experiment on the CPU runs that many "
         "scripts at once); above 1 each run that shared its device says so"},
    };
    return flags;
}

void addSpecFlags(CLI::App* cmd, RunOverrides& ro) {
    for (const auto& flag : specFlags()) {
        const auto& f = fieldOf(flag);
        std::string help = flag.help ? flag.help : f.info->help;
        if (flag.off) {
            cmd->add_flag(flag.names, ro.switches[f.path], help);
            cmd->add_flag(flag.off, ro.switches[std::string("!") + f.path],
                          std::string("the opposite of ") + flag.names);
            continue;
        }
        if (f.kind == ValueKind::Bool) {
            cmd->add_flag(flag.names, ro.switches[f.path], help);
            continue;
        }
        if (f.kind == ValueKind::Choice) {
            help += " (" + choiceText(f.choices) + ")";
        }
        // Checked as the field's type when parsed, so a bad value stops the command
        // with the flag's name before anything is read or run.
        const FlatField<ExperimentSpec>* field = &f;
        cmd->add_option(flag.names, ro.fields[f.path], help)
            ->type_name(f.kind == ValueKind::Int      ? "INT"
                        : f.kind == ValueKind::Double ? "NUMBER"
                                                      : "TEXT")
            ->check(CLI::Validator(
                [field](std::string& text) {
                    config::FieldValue value;
                    const std::string error = parse(*field, text, value);
                    return error.empty() ? error : text + " " + error;
                },
                ""));
    }
}

void applySpecFlags(const RunOverrides& ro, config::ExperimentSpec& spec,
                    std::vector<config::FieldError>& errors) {
    for (const auto& flag : specFlags()) {
        const auto& f = fieldOf(flag);
        if (flag.off) {
            const auto given = [&](const std::string& key) {
                const auto it = ro.switches.find(key);
                return it != ro.switches.end() && it->second;
            };
            const bool on = given(f.path), off = given(std::string("!") + f.path);
            if (on && off) {
                errors.push_back({flag.names, std::string(flag.names) + " " + flag.off,
                                  "say one of them, not both"});
            } else if (on || off) {
                config::FieldValue value;
                if (std::string error = parse(f, on ? "true" : "false", value); !error.empty()) {
                    errors.push_back({flag.names, on ? "true" : "false", error});
                } else {
                    f.set(spec, value);
                }
            }
            continue;
        }
        if (f.kind == ValueKind::Bool) {
            const auto on = ro.switches.find(f.path);
            if (on != ro.switches.end() && on->second) {
                f.set(spec, true);
            }
            continue;
        }
        const auto given = ro.fields.find(f.path);
        if (given == ro.fields.end() || !given->second) {
            continue;
        }
        config::FieldValue value;
        if (std::string error = parse(f, *given->second, value); !error.empty()) {
            const std::string names = flag.names;
            errors.push_back({names.substr(0, names.find(',')), *given->second, error});
            continue;
        }
        f.set(spec, value);
    }
}

}  // namespace ampbench::cli
