// ampbench-cli: the headless workbench. Trains comparisons into the store and reads them back.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "core/config/Presets.h"
#include "core/store/Paths.h"

using namespace ampbench;

int main(int argc, char** argv) {
    CLI::App app{
        "AMP Workbench (headless): compare FP32 against mixed-precision training, "
        "record everything in SQLite, print the verdict in numbers."};
    app.set_version_flag("--version", std::string("ampbench-cli ") + AMPBENCH_VERSION);
    std::string db = store::defaultDatabasePath();
    app.add_option("--db", db, "database file (default: " + db + ")");
    app.require_subcommand(1);

    cli::RunOverrides ro;
    auto* run = app.add_subcommand(
        "run", "train an experiment (default: the three-arm Fashion-MNIST comparison)");
    auto* preset = run->add_option("--preset", ro.preset, "built-in experiment")
                       ->check(CLI::IsMember(config::presetNames()));
    run->add_option("--config", ro.config_file, "experiment spec as JSON")
        ->check(CLI::ExistingFile)
        ->excludes(preset);
    run->add_option("--name", ro.name, "experiment name");
    run->add_option("--steps", ro.steps, "micro-batches per run (every arm sees the same samples)");
    run->add_option("--epochs", ro.epochs,
                    "whole passes over the training part (overrides --steps)");
    run->add_option("--micro-batch", ro.micro_batch, "samples per micro-batch");
    run->add_option("--lr", ro.lr, "base learning rate (before each arm's LR rule)");
    run->add_option("--optimizer", ro.optimizer, "sgd | adamw");
    run->add_option("--weight-decay", ro.weight_decay, "weight decay");
    run->add_option("--model", ro.model, "mlp | cnn | resnet | transformer");
    run->add_option("--width", ro.width, "model width (channels or hidden units)");
    run->add_option("--depth", ro.depth, "model depth (stages, layers)");
    run->add_option("--dataset", ro.dataset, "fashion-mnist | synthetic-images | synthetic-tokens");
    run->add_option("--data", ro.data_dir, "folder with Fashion-MNIST's four IDX .gz files");
    run->add_option("--device", ro.device, "auto | cpu | cuda");
    run->add_option("--threads", ro.threads, "CPU threads for LibTorch (0 = default)");
    run->add_option("--warmup", ro.warmup, "optimizer steps excluded from timing");
    run->add_option("--eval-interval", ro.eval_interval,
                    "micro-batches between evaluations (0 = end)");
    run->add_option("--eval-batches", ro.eval_batches,
                    "validation batches per evaluation (0 = all)");
    run->add_option("--seeds", ro.seeds, "seeds, e.g. --seeds 1 2 3")->expected(1, -1);
    run->add_option("--arm", ro.arms,
                    "arm as NAME=PRECISION[,accum=K][,lr=linear|sqrt|none][,clip=X][,tf32]; "
                    "repeat to replace the preset's arms")
        ->expected(1, -1);
    run->add_option("--save-spec", ro.save_spec, "write the resolved spec as JSON to this file");
    run->add_flag("--dry-run", ro.dry_run, "validate and print the spec; train nothing");
    run->add_flag("-q,--quiet", ro.quiet, "no progress output");

    app.add_subcommand("list", "list experiments and their runs");
    app.add_subcommand("presets", "list the built-in experiments");

    int64_t show_id = 0;
    bool show_experiment = false;
    auto* show =
        app.add_subcommand("show", "show one run (or --experiment: one experiment's table)");
    show->add_option("ID", show_id, "run id (or experiment id with --experiment)")->required();
    show->add_flag("-e,--experiment", show_experiment, "ID names an experiment");

    std::vector<int64_t> export_ids;
    std::string csv, json;
    bool export_experiment = false;
    auto* exp = app.add_subcommand("export", "write runs' metric rows as CSV and/or JSON");
    exp->add_option("ID", export_ids, "run ids (or experiment ids with --experiment)")
        ->required()
        ->expected(1, -1);
    exp->add_option("--csv", csv, "CSV file (long format)");
    exp->add_option("--json", json, "JSON file");
    exp->add_flag("-e,--experiment", export_experiment, "IDs name experiments");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? cli::kOk : cli::kUsage;
    }
    if (exp->parsed() && csv.empty() && json.empty()) {
        std::fprintf(stderr, "export: give --csv FILE and/or --json FILE\n");
        return cli::kUsage;
    }
    if (run->parsed()) {
        return cli::commandRun(db, ro);
    }
    if (app.got_subcommand("list")) {
        return cli::commandList(db);
    }
    if (app.got_subcommand("presets")) {
        return cli::commandPresets();
    }
    if (show->parsed()) {
        return cli::commandShow(db, show_id, show_experiment);
    }
    return cli::commandExport(db, export_ids, csv, json, export_experiment);
}
