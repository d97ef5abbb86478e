// What both run loops (RunLoop, the fused loop) share: the process-wide switches, the
// generated batches, evaluation, the run's opening records, the failure of the moment
// and the seeded model.
#include "core/train/private/RunLoop.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/amp/Fp8Linear.h"
#include "core/amp/LossScaler.h"
#include "core/amp/Precision.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/LrSchedule.h"
#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/data/Prefetcher.h"
#include "core/models/Registry.h"
#include "core/models/ScriptedModel.h"
#include "core/parallel/GradientSync.h"
#include "core/parallel/RankSummary.h"
#include "core/probe/Environment.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/store/StoreError.h"
#include "core/train/Experiment.h"
#include "core/train/private/AllocationFailure.h"
#include "core/train/private/NumericsRecorder.h"
#include "core/train/private/OptimizerStep.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/RunStream.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/StepRecorder.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {

using namespace run;  // the records a run emits
using config::Precision;

void applyProcessSwitches(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                          c10::Device device) {
    const bool cuda = device.is_cuda();
    auto& ctx = at::globalContext();
    if (spec.deterministic && cuda) {
        // cuBLAS is deterministic only with a fixed workspace (read when the first
        // handle is made; PyTorch refuses deterministic mode without it).
        ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    }
    ctx.setDeterministicAlgorithms(spec.deterministic, /*warn_only=*/false);
    if (cuda) {
        ctx.setAllowTF32CuBLAS(arm.tf32);
        ctx.setAllowTF32CuDNN(arm.tf32);
        ctx.setBenchmarkCuDNN(config::cudnnBenchmark(spec) && !spec.deterministic);
        ctx.setDeterministicCuDNN(spec.deterministic);
    }
}

std::vector<data::Batch> syntheticPool(const data::Dataset& dataset, int64_t global, uint64_t seed,
                                       c10::Device device, int rank, int world) {
    std::vector<data::Batch> pool;
    const int64_t n = dataset.trainSize();
    for (int i = 0; i < 4; ++i) {
        auto idx = at::remainder(at::arange(static_cast<int64_t>(i) * global,
                                            static_cast<int64_t>(i + 1) * global, at::kLong) +
                                     static_cast<int64_t>(seed % static_cast<uint64_t>(n)),
                                 n);
        if (world > 1) {  // this rank's shard: samples rank, rank + world, ...
            idx = idx.slice(0, rank, global, world).contiguous();
        }
        auto b = dataset.trainBatch(idx);
        pool.push_back({b.input.to(device), b.target.to(device)});
    }
    return pool;
}

void forEachEvalBatch(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                      const data::Dataset& dataset, const amp::Precision& precision,
                      c10::Device device,
                      const std::function<void(const at::Tensor&, const at::Tensor&)>& f) {
    const int64_t bs = std::max<int64_t>(config::microBatchOf(spec, arm), 256);
    const bool test = spec.data.evaluate_on == "test";
    int64_t total = test ? dataset.testSize() : dataset.valSize();
    if (spec.eval_batches > 0) {
        total = std::min<int64_t>(total, bs * spec.eval_batches);
    }
    // On CUDA each batch goes up from pinned memory without waiting: a copy from
    // pageable memory waits for the stream's queue to drain, so every batch cost a
    // round trip, and with runs packed on one GPU the trip waits behind their kernels
    // too. The caller reads its sums once, at the end.
    const bool async = device.is_cuda();
    const auto up = [&](const at::Tensor& t) {
        return async ? t.pin_memory().to(device, /*non_blocking=*/true) : t.to(device);
    };
    for (int64_t start = 0; start < total; start += bs) {
        const int64_t count = std::min(bs, total - start);
        auto b = test ? dataset.testBatch(start, count) : dataset.valBatch(start, count);
        auto x = precision.input(up(b.input));
        if (arm.channels_last) {
            x = x.contiguous(at::MemoryFormat::ChannelsLast);
        }
        f(x, up(b.target));
    }
}

run::EvalRecord evalRecordOf(int64_t step, int64_t samples, const TaskHead::Sums& sums,
                             double wall_s) {
    run::EvalRecord r;
    r.step = step;
    r.samples = samples;
    const auto count = static_cast<double>(sums.count);
    r.val_loss = sums.count > 0 ? sums.loss.item<double>() / count : NAN;
    r.val_accuracy = sums.count > 0 && sums.correct.defined()
                         ? static_cast<double>(sums.correct.item<int64_t>()) / count
                         : NAN;
    r.wall_s = wall_s;
    return r;
}

run::RunInfo runInfoOf(const config::ArmSpec& arm, const amp::Precision& precision,
                       const std::string& device, uint64_t seed, int64_t planned, int micro_batch,
                       double lr) {
    RunInfo info;
    info.arm = arm.name;
    info.precision = config::toString(precision.kind());
    info.device = device;
    info.seed = seed;
    info.planned_steps = planned;
    info.micro_batch = micro_batch;
    info.accumulation = arm.accumulation;
    info.lr = lr;
    return info;
}

std::vector<run::EventRecord> armEvents(const config::ArmSpec& arm, const amp::Precision& precision,
                                        const ParameterUpdater& updater, c10::Device device) {
    std::vector<run::EventRecord> out;
    if (arm.precision != precision.kind()) {  // as planning resolved it (amp)
        out.push_back({0, EventKind::Info,
                       "precision '" + config::toString(arm.precision) + "' runs as " +
                           config::toString(precision.kind()) + " on " + device.str(),
                       0.0});
    }
    out.push_back({0, EventKind::Info, "optimizer: " + updater.describe(), 0.0});
    for (const std::string& note : precision.startNotes()) {
        out.push_back({0, EventKind::Info, note, 0.0});
    }
    if (precision.autocast() && device.is_cuda()) {
        if (std::string off = checkFusedKernels(device); !off.empty()) {
            out.push_back({0, EventKind::Warning, off, 0.0});
        }
    }
    return out;
}

FailureOf currentFailure() {
    try {
        throw;
    } catch (const RunFailure& e) {
        return {EventKind::Warning, e.kind, e.what()};  // a NaN loss has its own event already
    } catch (const c10::OutOfMemoryError& e) {
        return {EventKind::OutOfMemory, FailureKind::OutOfMemory,
                std::string("out of memory: ") + e.what_without_backtrace()};
    } catch (const std::bad_alloc&) {
        return {EventKind::OutOfMemory, FailureKind::OutOfMemory,
                "out of memory: host allocation failed"};
    } catch (const c10::Error& e) {
        // LibTorch's CPU allocator reports a failed allocation as a plain c10::Error.
        const std::string what = e.what_without_backtrace();
        const bool alloc = allocationFailure(what);
        return {alloc ? EventKind::OutOfMemory : EventKind::Warning,
                alloc ? FailureKind::OutOfMemory : FailureKind::Runtime,
                alloc ? "out of memory: " + what : what};
    } catch (const data::DataError& e) {
        return {EventKind::Warning, FailureKind::Data, e.what()};
    } catch (const models::ModelError& e) {
        return {EventKind::Warning, FailureKind::Setup, e.what()};
    } catch (const store::StoreError& e) {
        return {EventKind::Warning, FailureKind::Recording, e.what()};
    } catch (const std::exception& e) {
        return {EventKind::Warning, FailureKind::Runtime, e.what()};
    } catch (...) {
        return {EventKind::Warning, FailureKind::Runtime, "an exception of unknown type"};
    }
}

std::shared_ptr<models::Network> seededModel(const config::ModelSpec& spec,
                                             const data::InputShape& shape, c10::Device device,
                                             uint64_t seed, at::Generator* generator) {
    // The seed and the initial weights drawn from it, with no other run of this
    // process drawing in between (runs spread over GPUs train side by side).
    static std::mutex init_mutex;
    std::lock_guard<std::mutex> lock(init_mutex);
    torch::manual_seed(seed);
    auto model = models::modelFor(spec, shape, device);
    if (generator) {
        *generator = at::globalContext().defaultGenerator(device).clone();
    }
    return model;
}

}  // namespace ampbench::train
