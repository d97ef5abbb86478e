#include "core/train/SetupCheck.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "core/amp/Fp8Linear.h"
#include "core/data/DataError.h"
#include "core/data/Datasets.h"
#include "core/models/Registry.h"
#include "core/models/ScriptedModel.h"
#include "core/numerics/NumericsTap.h"
#include "core/parallel/Communicator.h"
#include "core/train/Trainer.h"
#include "core/train/private/AllocationFailure.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {
namespace {

using Kind = SetupProblem::Kind;

std::string dataField(const config::DataSpec& d) {
    if (d.name == "fashion-mnist") {
        return "data.dir";
    }
    return config::fileData(d) ? "data.path" : "data.name";
}

std::string dataName(const config::DataSpec& d) {
    if (config::fileData(d)) {
        return d.path;
    }
    return d.name;
}

std::string modelName(const config::ModelSpec& m) {
    return m.name == "torchscript" ? m.file : "model " + m.name;
}

/// The line of an error that says what went wrong: TorchScript's interpreter puts
/// its traceback first and the cause ("RuntimeError: mat1 and mat2 ...") last.
std::string firstLine(std::string text) {
    const std::string tag = "RuntimeError: ";
    if (auto at = text.rfind(tag); at != std::string::npos) {
        text = text.substr(at + tag.size());
    }
    if (auto nl = text.find('\n'); nl != std::string::npos) {
        text.resize(nl);
    }
    return text;
}

std::vector<int64_t> toVector(at::IntArrayRef sizes) {
    return {sizes.begin(), sizes.end()};
}

}  // namespace

bool SetupReport::unreadable() const {
    for (const auto& p : problems) {
        if (p.kind == Kind::Unreadable) {
            return true;
        }
    }
    return false;
}

std::string SetupReport::problemText() const {
    std::string out;
    for (const auto& p : problems) {
        out += (out.empty() ? "" : "\n") + p.field + ": " + p.message;
    }
    return out;
}

std::string SetupReport::summary() const {
    char params[32];
    std::snprintf(params, sizeof params, "%.3g M", static_cast<double>(parameters) / 1e6);
    return model + ", " + params + " parameters; " + data + "; task " + task + " on " + device;
}

SetupError::SetupError(SetupReport report)
    : std::runtime_error(report.problemText()), report_(std::move(report)) {}

namespace {

/// The check's state as it goes: each step adds to the report and says whether the
/// next one can run (a step that cannot leaves the report as it is).
struct SetupCheck {
    const config::ExperimentSpec& spec;
    bool run_batch;
    SetupReport r;
    c10::Device device{c10::kCPU};
    std::shared_ptr<const data::Dataset> dataset;
    data::InputShape shape;
    config::Task task{};
    std::shared_ptr<models::Network> model;

    bool problem(Kind kind, std::string field, std::string message) {
        r.problems.push_back({kind, std::move(field), std::move(message)});
        return false;
    }

    /// Whether the spec's device exists here.
    bool findDevice() {
        try {
            r.device = resolveDevice(spec.device);
            device = c10::Device(r.device);
        } catch (const std::exception& e) {
            return problem(Kind::Mismatch, "device", e.what());
        }
        return true;
    }

    /// Whether the device can hold the spec's ranks and every FP8 arm.
    void checkArmsOnDevice() {
        for (const auto& e : config::checkRanks(spec, parallel::rankCapacity(device.is_cuda()))) {
            problem(Kind::Mismatch, e.field, e.message);  // more ranks than GPUs, no backend
        }
        for (size_t i = 0; i < spec.arms.size(); ++i) {
            if (spec.arms[i].precision != config::Precision::Fp8) {
                continue;
            }
            if (const std::string why = amp::fp8Unavailable(device); !why.empty()) {
                problem(Kind::Mismatch, "arms[" + std::to_string(i) + "].precision",
                        "arm '" + spec.arms[i].name + "': " + why);
            }
        }
    }

    /// Whether the data opens, holds training samples, has the split evaluated on and
    /// enough samples for one micro-batch (else no batch is tried).
    void openData() {
        try {
            dataset = data::openDataset(spec.data);
        } catch (const data::DataError& e) {
            problem(Kind::Unreadable, dataField(spec.data), e.what());
        } catch (const std::exception& e) {
            problem(Kind::Unreadable, dataField(spec.data), dataName(spec.data) + ": " + e.what());
        }
        if (!dataset) {
            return;
        }
        shape = dataset->shape();
        r.data = dataset->describe().empty() ? spec.data.name : dataset->describe();
        r.train_size = dataset->trainSize();
        r.val_size = dataset->valSize();
        r.sample = shape.sample;
        r.target = shape.target;
        r.class_names = shape.class_names;
        if (r.train_size == 0) {
            problem(Kind::Unreadable, dataField(spec.data),
                    dataName(spec.data) + ": the training part holds no samples");
        } else if (spec.data.evaluate_on == "test" && dataset->testSize() == 0) {
            problem(Kind::Mismatch, "data.evaluate_on",
                    dataName(spec.data) +
                        " has no test split of its own; evaluate on validation (give test files "
                        "as data.val_path)");
        } else if (spec.micro_batch > r.train_size) {
            problem(Kind::Mismatch, "micro_batch",
                    std::to_string(spec.micro_batch) + " must be at most the training set's " +
                        std::to_string(r.train_size) + " samples");
            run_batch = false;
        }
        for (size_t i = 0; i < spec.arms.size() && r.train_size > 0; ++i) {
            if (spec.arms[i].micro_batch > r.train_size) {
                problem(Kind::Mismatch, "arms[" + std::to_string(i) + "].micro_batch",
                        "arm '" + spec.arms[i].name +
                            "': " + std::to_string(spec.arms[i].micro_batch) +
                            " must be at most the training set's " + std::to_string(r.train_size) +
                            " samples");
            }
        }
    }

    /// Whether the model file (if any) is a readable TorchScript archive.
    bool describeModel() {
        if (spec.model.name != "torchscript") {
            r.model = "built-in " + spec.model.name;
            return true;
        }
        try {
            const auto file = models::inspectScripted(spec.model.file);
            r.model = models::describe(file);
            if (std::string advice = models::frozenAdvice(file); !advice.empty()) {
                r.warnings.push_back(advice);
            }
        } catch (const models::ModelError& e) {
            return problem(Kind::Unreadable, "model.file", e.what());
        }
        return true;
    }

    /// Whether the model builds (or loads) for the data's shapes on the device.
    bool buildModel() {
        task = resolveTask(spec, shape);
        r.task = config::toString(task);
        try {
            torch::manual_seed(spec.seeds.empty() ? 1 : spec.seeds.front());
            model = models::modelFor(spec.model, shape, device);
        } catch (const models::ModelError& e) {
            return problem(Kind::Unreadable, "model.file", e.what());
        } catch (const std::exception& e) {
            return problem(Kind::Mismatch, "model.name", firstLine(e.what()));
        }
        r.parameters = models::parameterCount(*model);
        for (const auto& part : model->parts()) {
            r.module_tree.push_back(
                (part.path.empty() ? std::string("(model)") : part.path) + "  " + part.type +
                (part.parameters ? "  " + std::to_string(part.parameters) : ""));
        }
        return true;
    }

    /// Whether every FP32 island pattern names a module of this model.
    void checkIslands() {
        for (size_t i = 0; i < spec.arms.size(); ++i) {
            const auto& arm = spec.arms[i];
            const auto islands = numerics::splitPatterns(arm.fp32_modules);
            if (islands.empty()) {
                continue;
            }
            const std::string field = "arms[" + std::to_string(i) + "].fp32_modules";
            const auto points = model->tapPoints();
            const std::string why =
                points.empty() ? "fp32_modules needs a built-in model: a model file's forward runs "
                                 "inside TorchScript, where autocast cannot be switched per module"
                               : numerics::unmatchedPatterns(islands, points);
            if (!why.empty()) {
                r.problems.push_back({Kind::Mismatch, field, "arm '" + arm.name + "': " + why});
            }
        }
    }

    /// Whether every fp8_modules pattern of an fp8 arm names a Linear layer of this model.
    void checkFp8Modules() {
        for (size_t i = 0; i < spec.arms.size(); ++i) {
            const auto& arm = spec.arms[i];
            if (arm.precision != config::Precision::Fp8) {
                continue;
            }
            if (const std::string why = amp::unmatchedFp8Modules(*model, arm.fp8_modules);
                !why.empty()) {
                r.problems.push_back({Kind::Mismatch, "arms[" + std::to_string(i) + "].fp8_modules",
                                      "arm '" + arm.name + "': " + why});
            }
        }
    }

    /// Whether the model takes a batch of the data's inputs; sets `out`. Failures to
    /// allocate and the model file's own errors go on to tryOneBatch.
    bool forward(const at::Tensor& x, const std::string& where, at::Tensor& out) {
        try {
            out = model->forward(x);
        } catch (const models::ModelError&) {
            throw;
        } catch (const c10::OutOfMemoryError&) {
            throw;
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& e) {
            // TorchScript's interpreter throws plain runtime errors, LibTorch c10::Error.
            const auto* c10 = dynamic_cast<const c10::Error*>(&e);
            if (allocationFailure(c10 ? c10->what_without_backtrace() : e.what())) {
                throw;
            }
            return problem(Kind::Mismatch,
                           spec.model.name == "torchscript" ? "model.file" : "model.name",
                           where + ": the model cannot take a batch of inputs " +
                               shapeText(x.sizes()) + " " + dtypeName(x.scalar_type()) + ": " +
                               firstLine(c10 ? c10->what_without_backtrace() : e.what()));
        }
        return true;
    }

    /// Whether the output fits the task, the fp32 loss is finite and gradients reach
    /// the parameters (all of them, or a warning names how many do not).
    void trainStep(const data::Batch& batch, const std::string& where) {
        model->train();
        auto x = batch.input.to(device);
        auto y = batch.target.to(device);
        at::Tensor out;
        if (!forward(x, where, out)) {
            return;
        }
        r.output = toVector(out.sizes());
        const TaskHead head(task);
        if (std::string why = head.mismatch(out, y, shape); !why.empty()) {
            problem(Kind::Mismatch, "model.task", where + ": " + why);
            return;
        }
        at::Tensor loss = head.loss(out, y);
        r.loss = loss.item<double>();
        if (!std::isfinite(r.loss)) {
            problem(Kind::Mismatch, dataField(spec.data),
                    where + ": the loss of the first batch is " + std::to_string(r.loss) +
                        " in fp32 (inputs or targets hold NaN or inf?)");
            return;
        }
        loss.backward();
        int64_t without = 0;
        for (auto& p : model->parameters()) {
            if (p.requires_grad() && !p.grad().defined()) {
                ++without;
            }
        }
        if (without == static_cast<int64_t>(model->parameters().size())) {
            problem(Kind::Mismatch, "model.file",
                    where + ": no parameter received a gradient (is the output detached?)");
        } else if (without > 0) {
            r.warnings.push_back(where + ": " + std::to_string(without) +
                                 " parameter tensors receive no gradient from the loss");
        }
    }

    /// Whether one micro-batch reads and trains; running out of memory is a warning,
    /// not a problem of the spec: each run meets the limit and records it.
    void tryOneBatch() {
        const std::string where = modelName(spec.model) + " on " + dataName(spec.data);
        data::Batch batch;
        try {
            const int64_t n = std::min<int64_t>(spec.micro_batch, r.train_size);
            batch = dataset->trainBatch(at::arange(n, at::kLong));
        } catch (const data::DataError& e) {
            problem(Kind::Unreadable, dataField(spec.data), e.what());
            return;
        }
        const std::string no_fit = where + ": the checked batch did not fit in memory";
        try {
            trainStep(batch, where);
        } catch (const models::ModelError& e) {
            problem(Kind::Mismatch, "model.file", where + ": " + e.what());
        } catch (const c10::OutOfMemoryError&) {
            r.warnings.push_back(no_fit);
        } catch (const std::bad_alloc&) {
            r.warnings.push_back(no_fit);
        } catch (const c10::Error& e) {
            if (allocationFailure(e.what_without_backtrace())) {
                r.warnings.push_back(no_fit);
            } else {
                problem(Kind::Mismatch, "model.task",
                        where + ": " + firstLine(e.what_without_backtrace()));
            }
        } catch (const std::exception& e) {
            problem(Kind::Mismatch, "model.task", where + ": " + firstLine(e.what()));
        }
    }
};

}  // namespace

SetupReport checkSetup(const config::ExperimentSpec& spec, bool run_batch, bool own_threads) {
    if (own_threads) {
        applyCpuThreads(spec.cpu_threads);  // as the runs will: the pool starts at their size
    }
    SetupCheck check{spec, run_batch, {}};
    if (!check.findDevice()) {
        return check.r;
    }
    check.checkArmsOnDevice();
    {
        // The device's context and its libraries load (CUDA: most of a second) while
        // the data is read; the model's build reports any failure of the device.
        struct Joined {
            std::thread t;
            ~Joined() {
                if (t.joinable()) {
                    t.join();
                }
            }
        } warm;
        if (check.device.is_cuda()) {
            warm.t = std::thread([device = check.device] {
                try {
                    (void)at::empty({1}, at::TensorOptions().device(device));
                } catch (...) {
                }
            });
        }
        check.openData();
    }
    if (!check.describeModel() || !check.dataset || !check.buildModel()) {
        return check.r;
    }
    check.checkIslands();
    check.checkFp8Modules();
    if (check.run_batch && check.r.train_size != 0) {
        check.tryOneBatch();
    }
    return check.r;
}

}  // namespace ampbench::train
