// profile_step: one benchmark cell (bench/workload_specs) trained by the
// workbench's loop with the PyTorch profiler (Kineto) on for a few optimizer
// steps after warm-up, written as a Chrome trace. bench/kernels.py sums the
// device kernels of this trace and of the PyTorch reference's, step by step, so
// a gap between the two shows up kernel by kernel. CUDA builds on LibTorch 2.x.
//
//   bench_profile_step WORKLOAD ARM TRACE.json [FIRST_STEP=12] [STEPS=5]
//
// WORKLOAD may also be a spec file (SPEC.json, as `ampbench-cli run --dry-run` writes
// it); ARM is then the name of one of its arms, trained alone on its first seed.
//
// NUMERICS_EVERY=N in the environment records per-layer numerics every N steps;
// AMPBENCH_UNFUSED=1 trains on the unfused path (ATen's loss, LayerNorm and GELU, as
// the tests compare them), so the fused kernels' gain shows in one call.
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/amp/HalfLinear.h"
#include "core/config/SpecJson.h"
#include "core/train/Trainer.h"
#include "workload_specs.h"

using namespace ampbench;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s WORKLOAD ARM TRACE.json [FIRST_STEP] [STEPS]\n", argv[0]);
        return 2;
    }
    const std::string workload = argv[1], arm = argv[2], trace = argv[3];
    const int64_t first = argc > 4 ? std::atoll(argv[4]) : 12;
    const int64_t count = argc > 5 ? std::atoll(argv[5]) : 5;
    config::ExperimentSpec spec;
    if (workload.size() > 5 && workload.compare(workload.size() - 5, 5, ".json") == 0) {
        std::ifstream in(workload);
        std::stringstream text;
        text << in.rdbuf();
        std::vector<config::FieldError> errors;
        spec = config::specFromJsonText(text.str(), errors);
        auto named = std::find_if(spec.arms.begin(), spec.arms.end(),
                                  [&](const config::ArmSpec& a) { return a.name == arm; });
        if (!in || !errors.empty() || named == spec.arms.end()) {
            std::fprintf(stderr, "%s: not a spec with an arm '%s'%s%s\n", workload.c_str(),
                         arm.c_str(), errors.empty() ? "" : ": ",
                         errors.empty() ? "" : errors.front().message.c_str());
            return 2;
        }
        spec.arms = {*named};
        spec.seeds = {spec.seeds.empty() ? 1 : spec.seeds.front()};
    } else {
        const auto cells = bench::workloadCells(workload, true);
        auto cell = std::find_if(cells.begin(), cells.end(),
                                 [&](const bench::Cell& c) { return c.arm == arm; });
        if (cell == cells.end()) {
            std::fprintf(stderr, "no cell %s/%s\n", workload.c_str(), arm.c_str());
            return 2;
        }
        spec = cell->spec;
    }
    if (const char* unfused = std::getenv("AMPBENCH_UNFUSED"); unfused && *unfused == '1') {
        amp::setFusedKernels(false);
    }
    if (const char* every = std::getenv("NUMERICS_EVERY")) {  // per-layer numerics on
        spec.numerics_every = std::atoll(every);
    }
    const int64_t k = spec.arms[0].accumulation;
    spec.micro_steps = std::max<int64_t>(spec.micro_steps, (first + count + 1) * k);

    namespace prof = torch::autograd::profiler;
    using torch::profiler::impl::ActivityType;
    const torch::profiler::impl::ProfilerConfig config(
        torch::profiler::impl::ProfilerState::KINETO);
    const std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
    prof::prepareProfiler(config, activities);

    bool written = false;
    train::TrainOptions options;
    options.before_micro_batch = [&](int64_t micro) {
        // Micro-batch m starts optimizer step (m - 1) / K + 1.
        if (micro == (first - 1) * k + 1) {
            c10::cuda::device_synchronize();
            prof::enableProfiler(config, activities);
        } else if (micro == (first - 1 + count) * k + 1) {
            c10::cuda::device_synchronize();
            prof::disableProfiler()->save(trace);
            written = true;
        }
    };
    run::TrainObserver none;
    run::CancelToken cancel;
    const auto outcome = train::trainRun(spec, 0, spec.seeds.front(), none, cancel, options);
    std::printf("%s/%s: %s; steps %lld..%lld profiled into %s\n", workload.c_str(), arm.c_str(),
                run::toString(outcome.status).c_str(), static_cast<long long>(first),
                static_cast<long long>(first + count - 1), written ? trace.c_str() : "(nothing)");
    if (!outcome.error.empty()) {
        std::printf("error: %s\n", outcome.error.c_str());
    }
    return written ? 0 : 1;
}
