// GPU workloads benchmark: each workload × arm trained by ampbench's own loop and
// recorded into SQLite as the workbench does, then summarised. Prints a table and
// one machine-readable "CELL {json}" line per cell (bench/compare.py reads them).
//
//   bench_workloads [--workloads cnn,resnet50,gpt2] [--db FILE] [--quick]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "SteadyClock.h"
#include "core/analysis/Format.h"
#include "core/analysis/Statistics.h"
#include "core/analysis/Summary.h"
#include "core/config/Presets.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "workload_specs.h"

using namespace ampbench;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, ',')) {
        out.push_back(part);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string workloads = "cnn,resnet50,gpt2";
    std::string db_path = (std::filesystem::temp_directory_path() / "ampbench-bench.db").string();
    bool quick = false;
    bool overhead = true;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--workloads") && i + 1 < argc) {
            workloads = argv[++i];
        } else if (!std::strcmp(argv[i], "--db") && i + 1 < argc) {
            db_path = argv[++i];
        } else if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!std::strcmp(argv[i], "--no-overhead")) {
            overhead = false;
        } else {
            std::fprintf(stderr,
                         "usage: %s [--workloads cnn,resnet50,gpt2] [--db FILE] [--quick]\n",
                         argv[0]);
            return 2;
        }
    }
    std::filesystem::remove(db_path);
    auto db = store::Database::open(db_path);
    std::printf("%-9s %-16s %10s %19s %12s %11s %7s %7s %8s %6s %6s\n", "workload", "arm", "median",
                "p10-p90", "items/s", "peak alloc", "speed", "memory", "TFLOP/s", "wait", "record");
    for (const auto& name : split(workloads)) {
        auto cells = bench::workloadCells(name, quick);
        if (cells.empty()) {
            std::fprintf(stderr, "unknown workload '%s'\n", name.c_str());
            return 2;
        }
        {
            // One short unrecorded run first, at batch 2: the process's one-off costs
            // (CUDA's lazy kernel loading, cuBLAS handles and workspaces) are then not
            // charged to the workload's first cell, while cuDNN's algorithm search for
            // the cell's own shapes (and its memory peak) stays in the cell, as in the
            // reference.
            auto warm = cells.front().spec;
            warm.micro_batch = std::min(warm.micro_batch, 2);
            warm.micro_steps = 5;
            warm.warmup_steps = 0;
            run::CancelToken cancel;
            run::TrainObserver none;
            train::trainRun(warm, 0, warm.seeds.front(), none, cancel);
        }
        double base_sps = 0;
        int64_t base_mem = 0;
        for (const auto& cell : cells) {
            const auto& spec = cell.spec;
            auto plan = train::planExperiment(*db, spec);
            run::CancelToken cancel;
            // Steady-state wall time per step after the warm-up, recorded and (below) bare.
            bench::SteadyClock clock(nullptr, spec.warmup_steps);
            train::TrainOptions opts;
            train::RecordingCost cost;
            opts.recording_cost = &cost;
            auto out = train::executeRun(*db, spec, plan.runs.front(), cancel, &clock, opts);
            auto row = db->run(plan.runs.front().run_id);
            auto s = analysis::summarizeRun(*row, db->steps(row->id), db->evals(row->id));
            if (out.status != run::RunStatus::Finished) {
                std::printf("%-9s %-16s failed: %s\n", name.c_str(), cell.arm.c_str(),
                            out.error.c_str());
                nlohmann::json j = {{"workload", name}, {"arm", cell.arm}, {"error", out.error}};
                std::printf("CELL %s\n", j.dump().c_str());
                continue;
            }
            double items_per_step = static_cast<double>(spec.micro_batch) *
                                    spec.arms[0].accumulation * cell.items_per_sample;
            double items_per_s = items_per_step / (s.median_step_ms / 1000.0);
            if (cell.arm == "fp32") {
                base_sps = items_per_s;
                base_mem = s.peak_mem;
            }
            double tflops = cell.flops_per_item > 0 ? cell.flops_per_item * items_per_s / 1e12
                                                    : std::numeric_limits<double>::quiet_NaN();
            // Recording overhead: the same cell without probes, norms or database.
            double overhead_ratio = std::numeric_limits<double>::quiet_NaN();
            // Host time in recording calls per step, as a share of the median step.
            const double host_share = cost.total() /
                                      std::max<double>(1.0, static_cast<double>(out.steps_done)) /
                                      s.median_step_ms;
            const double rec_wall_ms = clock.measured() ? clock.msPerStep() : NAN;
            if (overhead && cell.measure_overhead) {
                bench::SteadyClock bare_clock(nullptr, spec.warmup_steps);
                auto out2 = train::trainRun(spec, 0, spec.seeds.front(), bare_clock, cancel,
                                            bench::bareOptions());
                if (out2.status == run::RunStatus::Finished && bare_clock.measured()) {
                    overhead_ratio = rec_wall_ms / bare_clock.msPerStep();
                }
            }
            std::printf(
                "%-9s %-16s %10s %9s-%-9s %12.0f %11s %7s %7s %8s %6s %6s\n", name.c_str(),
                cell.arm.c_str(), analysis::formatMs(s.median_step_ms).c_str(),
                analysis::formatMs(s.p10_step_ms).c_str(),
                analysis::formatMs(s.p90_step_ms).c_str(), items_per_s,
                analysis::formatBytes(s.peak_mem).c_str(),
                analysis::formatRatio(base_sps > 0 ? items_per_s / base_sps : NAN).c_str(),
                analysis::formatRatio(base_mem > 0 ? double(s.peak_mem) / base_mem : NAN).c_str(),
                analysis::formatNumber(tflops, 1).c_str(),
                analysis::formatPercent(s.data_wait_share).c_str(),
                analysis::formatPercent(host_share).c_str());
            nlohmann::json j = {
                {"workload", name},
                {"arm", cell.arm},
                {"median_ms", s.median_step_ms},
                {"p10_ms", s.p10_step_ms},
                {"p90_ms", s.p90_step_ms},
                {"items_per_s", items_per_s},
                {"peak_alloc", s.peak_mem},
                {"tflops", std::isfinite(tflops) ? tflops : 0.0},
                {"data_wait_share", s.data_wait_share},
                {"skipped", s.skipped},
                {"recording_overhead", std::isfinite(overhead_ratio) ? overhead_ratio - 1.0 : -1.0},
                {"recording_host_share", host_share},
                {"wall_ms_per_step", rec_wall_ms}};
            std::printf("CELL %s\n", j.dump().c_str());
            std::fflush(stdout);
        }
    }
    std::printf("database: %s\n", db_path.c_str());
    return 0;
}
