// The spec's tables: every field of the experiment, its model, data, optimizer, arms and
// loss scaler (with the conditions under which one applies), and each enumeration's names.
#include "core/config/SpecFields.h"

#include "core/config/PrecisionFormats.h"

namespace ampbench::config {
namespace {

// Conditions under which a field is used (validated, editable).
bool stepsUsed(const ExperimentSpec& s) {
    return s.epochs == 0;
}
bool resnet(const ExperimentSpec& s) {
    return s.model.name == "resnet";
}
bool transformer(const ExperimentSpec& s) {
    return s.model.name == "transformer";
}
bool fashionMnist(const ExperimentSpec& s) {
    return s.data.name == "fashion-mnist";
}
bool syntheticImages(const ExperimentSpec& s) {
    return s.data.name == "synthetic-images";  // fashion-mnist is always 1x28x28, 10 classes
}
bool imageChannels(const ExperimentSpec& s) {
    return s.data.name == "synthetic-images" || s.data.name == "image-folder";
}
bool imageFolder(const ExperimentSpec& s) {
    return s.data.name == "image-folder";
}
bool arrays(const ExperimentSpec& s) {
    return s.data.name == "arrays";
}
bool csv(const ExperimentSpec& s) {
    return s.data.name == "csv";
}
bool files(const ExperimentSpec& s) {
    return fileData(s.data);
}
bool fraction(const ExperimentSpec& s) {
    return !fileData(s.data) || s.data.val_path.empty();
}
bool scripted(const ExperimentSpec& s) {
    return s.model.name == "torchscript" || s.model.name == "script";
}
bool trainingScript(const ExperimentSpec& s) {
    return s.model.name == "script";
}
bool builtIn(const ExperimentSpec& s) {
    return !scripted(s);
}
bool syntheticTokens(const ExperimentSpec& s) {
    return s.data.name == "synthetic-tokens";
}
bool sgd(const ExperimentSpec& s) {
    return s.optimizer.kind == OptimizerKind::Sgd;
}
bool adamw(const ExperimentSpec& s) {
    return s.optimizer.kind == OptimizerKind::AdamW;
}
bool warmupUsed(const ExperimentSpec& s) {
    return s.optimizer.schedule != LrSchedule::Constant;
}
bool stepSchedule(const ExperimentSpec& s) {
    return s.optimizer.schedule == LrSchedule::Step;
}
bool cosineSchedule(const ExperimentSpec& s) {
    return s.optimizer.schedule == LrSchedule::Cosine;
}
bool crossEntropy(const ExperimentSpec& s) {
    return s.model.task != Task::Regression;
}

using E = ExperimentSpec;
using M = ModelSpec;
using D = DataSpec;
using O = OptimizerSpec;
using A = ArmSpec;
using S = ScalerSpec;

}  // namespace

// --- the tables ---

const std::vector<Field<ExperimentSpec>>& fieldsOf(const ExperimentSpec*) {
    static const std::vector<Field<E>> table = {
        field("name", &E::name, "Name", "Shown in the history and reports").in("Experiment"),
        field("model", &E::model, "Model", "What is trained"),
        field("data", &E::data, "Data", "What it is trained on"),
        field("optimizer", &E::optimizer, "Optimizer", "How it is trained"),
        field("micro_batch", &E::micro_batch, "Micro-batch",
              "Samples per micro-batch (effective batch = micro-batch \u00d7 K)")
            .range(1, 65536)
            .in("Schedule"),
        field("micro_steps", &E::micro_steps, "Micro-steps",
              "Micro-batches per run (forward and backward passes); an arm with accumulation K "
              "makes micro-steps / K optimizer steps, so every arm sees the same samples")
            .range(1, 1e9)
            .formerly("steps")
            .when(&stepsUsed)
            .in("Schedule"),
        field("epochs", &E::epochs, "Epochs",
              "Whole passes over the training part; when > 0, overrides micro-steps")
            .range(0, 10000)
            .in("Schedule"),
        field("warmup_steps", &E::warmup_steps, "Warm-up steps",
              "Optimizer steps excluded from timing")
            .range(0, 100000)
            .in("Schedule"),
        field("eval_interval", &E::eval_interval, "Eval interval",
              "Micro-steps between evaluations; 0 = only at the end")
            .range(0, 1e9)
            .in("Schedule"),
        field("eval_batches", &E::eval_batches, "Eval batches",
              "Validation batches per evaluation; 0 = the whole validation part")
            .range(0, 1000000)
            .in("Schedule"),
        field("numerics_every", &E::numerics_every, "Numerics every",
              "Optimizer steps between per-layer numerics records: each gradient's abs-max, "
              "share under fp16's smallest subnormal and normal at the loss scale, headroom "
              "to overflow, and each module's output; 0 = off (it costs time: leave it off "
              "in timing runs)")
            .range(0, 1e9)
            .zeroIs("off")
            .in("Schedule"),
        field("seeds", &E::seeds, "Seeds", "One run per arm and seed, e.g. 1, 2, 3")
            .in("Experiment"),
        field("device", &E::device, "Device", "auto = CUDA when available").in("Experiment"),
        field("cpu_threads", &E::cpu_threads, "CPU threads", "0 = every logical CPU")
            .range(0, 1024)
            .in("Experiment"),
        field("gpus", &E::gpus, "GPUs",
              "CUDA: GPUs the runs are spread over, one run per GPU at a time; 0 = every "
              "visible GPU")
            .range(0, 64)
            .zeroIs("all")
            .in("Experiment"),
        field("runs_per_gpu", &E::runs_per_gpu, "Runs per GPU",
              "CUDA: runs one GPU holds at once; above 1 for small models, whose step times "
              "are then flagged as shared")
            .range(1, 16)
            .in("Experiment"),
        field("fast_verdict", &E::fast_verdict, "Fast verdict",
              "CUDA: every arm that can is captured in a CUDA graph and the runs are packed on "
              "the GPUs; each arm is first timed alone (eager and graph), and the speed and "
              "memory figures come from those passes")
            .in("Experiment"),
        field("cudnn_benchmark", &E::cudnn_benchmark, "cuDNN benchmark",
              "Let cuDNN pick the fastest kernels (their rounding can differ between runs); "
              "auto: on, off under the fast verdict (PyTorch's default)")
            .in("Experiment"),
        field("fuse_seeds", &E::fuse_seeds, "Fuse seeds",
              "Train an arm's seeds as one fused model (built-in cnn and mlp; each seed still "
              "its own run); auto: on under the fast verdict")
            .in("Experiment"),
        field("deterministic", &E::deterministic, "Deterministic",
              "Deterministic kernels only (slower; cuDNN benchmark off): a seed repeats its "
              "losses exactly")
            .in("Experiment"),
        field("tolerance_margin", &E::tolerance_margin, "Tolerance margin",
              "The verdict's tolerance on the final metric is the larger of 2 seed-sigma and "
              "this (accuracy as a fraction: 0.005 = half a point)")
            .range(0, 1e6)
            .in("Experiment"),
        field("interleave", &E::interleave, "Interleave runs",
              "Round-robin over the arms, seed by seed, so a drift in the machine's speed is "
              "shared by every arm; off: arm by arm")
            .in("Experiment"),
        field("save_weights", &E::save_weights, "Save weights to",
              "Folder for each run's trained model file (<experiment>-<arm>-seed<N>.pt); "
              "empty = not saved")
            .when(&scripted)
            .browseFor("folder")
            .in("Experiment"),
        field("arms", &E::arms, "Arms", "The precisions compared, one row each"),
    };
    return table;
}

const std::vector<Field<ModelSpec>>& fieldsOf(const ModelSpec*) {
    static const std::vector<Field<M>> table = {
        field("name", &M::name, "Model",
              "A built-in model, torchscript: your own model file, or script: your own Python "
              "training script, run once per arm and seed")
            .oneOf({"mlp", "cnn", "resnet", "transformer", "torchscript", "script"}),
        field("file", &M::file, "Model file",
              "A module saved from Python with torch.jit.script(model).save(\"model.pt\"); "
              "script: the Python training script")
            .when(&scripted)
            .browseFor("file:TorchScript modules (*.pt *.pth *.ts);;Python scripts (*.py);;All "
                       "files (*)"),
        field("python", &M::python, "Python",
              "script: the interpreter that runs it; empty = $AMPBENCH_PYTHON, else python3 "
              "(Debian's /usr/bin/python3 has PyTorch from python3-torch)")
            .when(&trainingScript)
            .browseFor("file:All files (*)"),
        field("args", &M::args, "Script arguments",
              "script: its command-line arguments, split as a shell would ('quotes' keep "
              "spaces inside one argument)")
            .when(&trainingScript),
        field("task", &M::task, "Task",
              "classification: [N, C] logits vs labels; tokens: [N, T, V] vs [N, T]; "
              "regression: MSE; auto: from the model or the data"),
        field("label_smoothing", &M::label_smoothing, "Label smoothing",
              "Cross-entropy's label smoothing (classification, tokens)")
            .range(0, 1, true, false)
            .usedWhen(&crossEntropy),
        field("width", &M::width, "Width", "Base channels, hidden units or d_model")
            .range(1, 8192)
            .when(&builtIn),
        field("depth", &M::depth, "Depth", "Conv blocks, hidden layers or transformer layers")
            .range(1, 256)
            .when(&builtIn),
        field("blocks", &M::blocks, "ResNet blocks", "Blocks per stage, e.g. 3, 4, 6, 3")
            .range(1, 64)
            .when(&resnet),
        field("bottleneck", &M::bottleneck, "Bottleneck", "ResNet-50 style blocks").when(&resnet),
        field("heads", &M::heads, "Heads", "Attention heads; must divide the width")
            .range(1, 8192)
            .when(&transformer),
        field("attention", &M::attention, "Attention",
              "scaled: softmax(q k^T / sqrt(d)) v (fused where LibTorch has it); unscaled: "
              "without the 1/sqrt(d), the scores in the autocast dtype, as a naive "
              "implementation computes them (they can overflow fp16)")
            .oneOf({"scaled", "unscaled"})
            .when(&transformer),
        field("init_std", &M::init_std, "Init \u03c3",
              "Standard deviation of the linear and embedding weights at initialisation "
              "(GPT-2: 0.02)")
            .range(0, 100, false, true)
            .when(&transformer),
        field("dropout", &M::dropout, "Dropout", "Probability of zeroing an activation")
            .range(0, 1, true, false)
            .when(&builtIn),
    };
    return table;
}

const std::vector<Field<DataSpec>>& fieldsOf(const DataSpec*) {
    static const std::vector<Field<D>> table = {
        field("name", &D::name, "Dataset",
              "Built-in data, or your own: arrays (.npz/.npy), image-folder (one sub-folder "
              "per class) or csv")
            .oneOf({"fashion-mnist", "synthetic-images", "synthetic-tokens", "arrays",
                    "image-folder", "csv"}),
        field("dir", &D::dir, "Folder",
              "Fashion-MNIST's four IDX .gz files; empty = the installed dataset")
            .when(&fashionMnist)
            .browseFor("folder"),
        field("path", &D::path, "Data",
              "arrays: an .npz with x and y, or the inputs' .npy; image-folder: a folder with "
              "one sub-folder per class; csv: a table with a header row")
            .when(&files)
            .browseFor("file-or-folder:Data (*.npz *.npy *.csv);;All files (*)"),
        field("labels", &D::labels, "Labels file",
              "arrays: the labels' .npy beside an inputs .npy; empty = the inputs' name with "
              "x replaced by y (x.npy \u2192 y.npy)")
            .when(&arrays)
            .browseFor("file:NumPy arrays (*.npy);;All files (*)"),
        field("val_path", &D::val_path, "Validation data",
              "The validation part in the same format; empty = a seeded fraction of the data")
            .when(&files)
            .browseFor("file-or-folder:Data (*.npz *.npy *.csv);;All files (*)"),
        field("val_fraction", &D::val_fraction, "Validation fraction",
              "Held out from the training data (the same samples for every seed and arm)")
            .range(0, 0.5, false, true)
            .when(&fraction),
        field("label_column", &D::label_column, "Label column",
              "csv: the label's column, by header name or 0-based index; empty = the last")
            .when(&csv),
        field("image_size", &D::image_size, "Image size",
              "image-folder: shorter side resized to this, then centre-cropped square; 0 = "
              "every image as stored (all the same size)")
            .range(0, 4096)
            .zeroIs("as stored")
            .when(&imageFolder),
        field("mean", &D::mean, "Mean",
              "Subtracted per channel (or one for all) after uint8 "
              "data is scaled to [0, 1]; empty = none")
            .when(&files),
        field("std", &D::std, "Std",
              "Divides per channel (or one for all) after the mean; "
              "empty = none")
            .range(0, 1e30, false, true)
            .when(&files),
        field("channels", &D::channels, "Channels", "Synthetic images; image-folder: 1 or 3")
            .range(1, 64)
            .when(&imageChannels),
        field("height", &D::height, "Height", "Synthetic images")
            .range(1, 4096)
            .when(&syntheticImages),
        field("width", &D::width, "Width", "Synthetic images")
            .range(1, 4096)
            .when(&syntheticImages),
        field("classes", &D::classes, "Classes", "Synthetic images")
            .range(2, 100000)
            .when(&syntheticImages),
        field("seq_len", &D::seq_len, "Sequence length", "Synthetic tokens")
            .range(2, 65536)
            .when(&syntheticTokens),
        field("vocab", &D::vocab, "Vocabulary", "Synthetic tokens")
            .range(2, 1000000)
            .when(&syntheticTokens),
        field("prefetch", &D::prefetch, "Prefetch",
              "Batches prepared ahead by the background thread")
            .range(1, 64),
        field("evaluate_on", &D::evaluate_on, "Evaluate on",
              "validation: the part held out from training; test: the dataset's own test "
              "split (Fashion-MNIST's t10k images)")
            .oneOf({"validation", "test"}),
    };
    return table;
}

const std::vector<Field<OptimizerSpec>>& fieldsOf(const OptimizerSpec*) {
    static const std::vector<Field<O>> table = {
        field("kind", &O::kind, "Optimizer", "SGD with momentum or AdamW"),
        field("lr", &O::lr, "Learning rate", "Base rate, before each arm's LR rule")
            .range(0, 10, false, true),
        field("momentum", &O::momentum, "Momentum", "SGD").range(0, 1, true, false).usedWhen(&sgd),
        field("weight_decay", &O::weight_decay, "Weight decay", "0 \u2026 1").range(0, 1),
        field("beta1", &O::beta1, "Beta 1", "AdamW").range(0, 1, true, false).usedWhen(&adamw),
        field("beta2", &O::beta2, "Beta 2", "AdamW").range(0, 1, true, false).usedWhen(&adamw),
        field("eps", &O::eps, "Epsilon", "AdamW").range(0, 1e-2, false, true).usedWhen(&adamw),
        field("nesterov", &O::nesterov, "Nesterov", "SGD: Nesterov momentum").usedWhen(&sgd),
        field("schedule", &O::schedule, "LR schedule",
              "constant; warmup (linear, then constant); cosine (after a linear warm-up); "
              "step (\u00d7 gamma every step fraction); onecycle (PyTorch's OneCycleLR). Over "
              "each arm's optimizer steps, so arms with accumulation follow it per sample alike"),
        field("warmup_fraction", &O::warmup_fraction, "Warm-up fraction",
              "Share of the run with a linear warm-up (onecycle: the rise, PyTorch's "
              "pct_start)")
            .range(0, 1, true, false)
            .usedWhen(&warmupUsed),
        field("step_fraction", &O::step_fraction, "Step every",
              "step: the lr is multiplied by gamma after every this share of the run")
            .range(0, 1, false, true)
            .usedWhen(&stepSchedule),
        field("gamma", &O::gamma, "Gamma", "step: the factor at each step")
            .range(0, 1, false, true)
            .usedWhen(&stepSchedule),
        field("min_lr_fraction", &O::min_lr_fraction, "Final LR fraction",
              "cosine: the lr it ends at, as a fraction of the lr")
            .range(0, 1, true, false)
            .usedWhen(&cosineSchedule),
    };
    return table;
}

const std::vector<Field<ArmSpec>>& fieldsOf(const ArmSpec*) {
    static const std::vector<Field<A>> table = {
        field("name", &A::name, "Name", "Unique within the experiment"),
        field("precision", &A::precision, "Precision",
              "fp32; amp = fp16 + loss scaling on CUDA, bf16 on CPU; fp8 = Linear layers in "
              "FP8 (CUDA, compute capability 8.9+)"),
        field("accumulation", &A::accumulation, "Accumulation K",
              "Micro-batches per optimizer step (effective batch = micro-batch \u00d7 K)")
            .range(1, 1024)
            .abbrev("accum")
            .header("Accum. K"),
        field("micro_batch", &A::micro_batch, "Micro-batch",
              "This arm's samples per micro-batch; 0 = the experiment's. It trains the same "
              "samples, and its LR rule follows its effective batch against the experiment's")
            .range(0, 65536)
            .zeroIs("the experiment's")
            .abbrev("batch")
            .header("Batch"),
        field("ranks", &A::ranks, "Ranks",
              "Data-parallel processes: one per GPU on CUDA (NCCL), processes on the CPU (Gloo); "
              "global batch = micro-batch \u00d7 K \u00d7 ranks")
            .range(1, 64)
            .abbrev("ranks"),
        field("lr_rule", &A::lr_rule, "LR rule",
              "How the learning rate follows the effective batch")
            .abbrev("lr"),
        field("grad_clip", &A::grad_clip, "Grad clip",
              "Max global gradient L2 norm after unscaling; 0 = off")
            .atLeast(0)
            .zeroIs("off")
            .abbrev("clip"),
        field("tf32", &A::tf32, "TF32", "Allow TF32 matmuls (fp32 arms on CUDA)").abbrev("tf32"),
        field("channels_last", &A::channels_last, "Channels last",
              "NHWC memory format (cnn, resnet)")
            .abbrev("channels_last")
            .header("Ch. last"),
        field("checkpointing", &A::checkpointing, "Checkpointing",
              "Recompute activations in backward (resnet, transformer)")
            .abbrev("checkpoint")
            .header("Checkpt."),
        field("cuda_graph", &A::cuda_graph, "CUDA graph",
              "Capture the whole step in a CUDA graph (K = 1, CUDA)")
            .abbrev("graph"),
        field("fp32_modules", &A::fp32_modules, "FP32 modules",
              "FP32 islands: modules of the model that run with autocast off and their inputs "
              "in fp32, by name or glob pattern, separated by ';' (head;blocks.*.ln1); "
              "built-in models")
            .abbrev("fp32_modules")
            .header("FP32 islands"),
        field("fp8_recipe", &A::fp8_recipe, "FP8 scaling",
              "fp8: delayed (each tensor's scale from its largest |value| over the last FP8 "
              "history casts, one pass) or current (from the tensor itself, one more pass)")
            .abbrev("fp8")
            .header("FP8 scaling"),
        field("fp8_history", &A::fp8_history, "FP8 history",
              "fp8 delayed: how many casts of a tensor its scale follows")
            .range(1, 1024)
            .abbrev("fp8_history")
            .header("FP8 hist."),
        field("fp8_margin", &A::fp8_margin, "FP8 margin",
              "fp8: powers of two left free below the format's largest value")
            .range(0, 8)
            .abbrev("fp8_margin")
            .header("FP8 margin"),
        field("fp8_modules", &A::fp8_modules, "FP8 layers",
              "fp8: which Linear layers compute in FP8: auto (empty: from their shapes, where "
              "the matmul time saved exceeds the casts'), all (every layer the scaled matmul "
              "takes), or names and glob patterns separated by ';' (head;fc1, blocks.*.fc2)")
            .abbrev("fp8_modules")
            .header("FP8 layers"),
        field("repeats", &A::repeats, "Seeds per arm",
              "How many seeds this arm runs (the experiment's first ones, then more); 0 = all "
              "of the experiment's seeds")
            .range(0, 100)
            .abbrev("repeats")
            .header("Seeds/arm"),
        field("seed_offset", &A::seed_offset, "Seed offset",
              "Added to each seed of this arm: fp32 again on other seeds is an A/A check of "
              "the verdict and of the timing noise")
            .range(0, 1e9)
            .abbrev("seed_offset")
            .header("Seed +"),
        field("loss_scaling", &A::loss_scaling, "Loss scaling",
              "fp16 autocast with dynamic loss scaling; off is a negative control (noscale)")
            .abbrev("scale")
            .header("Scaling"),
        field("scaler", &A::scaler, "Loss scaler", "Dynamic loss scaling (fp16)"),
    };
    return table;
}

const std::vector<Field<ScalerSpec>>& fieldsOf(const ScalerSpec*) {
    static const std::vector<Field<S>> table = {
        field("init_scale", &S::init_scale, "Scaler init", "Loss scaler: initial scale (fp16)")
            .range(0, 18446744073709551616.0, false, true, "2^64")
            .abbrev("init_scale"),
        field("growth_factor", &S::growth_factor, "Growth", "Loss scaler: growth factor")
            .range(1, 1e3, false, true),
        field("backoff_factor", &S::backoff_factor, "Backoff", "Loss scaler: backoff factor")
            .range(0, 1, false, false),
        field("growth_interval", &S::growth_interval, "Interval",
              "Loss scaler: steps without overflow before growing")
            .range(1, 1e9)
            .abbrev("growth_interval"),
    };
    return table;
}

// --- enumerations ---

const std::vector<EnumName<Precision>>& enumNames(Precision) {
    static const std::vector<EnumName<Precision>> names = [] {
        std::vector<EnumName<Precision>> out;
        for (const auto& f : precisionFormats()) {
            out.push_back({f.id, f.name});
        }
        return out;
    }();
    return names;
}
const std::vector<EnumName<Fp8Recipe>>& enumNames(Fp8Recipe) {
    static const std::vector<EnumName<Fp8Recipe>> names = {{Fp8Recipe::Delayed, "delayed"},
                                                           {Fp8Recipe::Current, "current"}};
    return names;
}
const std::vector<EnumName<LrRule>>& enumNames(LrRule) {
    static const std::vector<EnumName<LrRule>> names = {
        {LrRule::Linear, "linear"}, {LrRule::Sqrt, "sqrt"}, {LrRule::None, "none"}};
    return names;
}
const std::vector<EnumName<OptimizerKind>>& enumNames(OptimizerKind) {
    static const std::vector<EnumName<OptimizerKind>> names = {{OptimizerKind::Sgd, "sgd"},
                                                               {OptimizerKind::AdamW, "adamw"}};
    return names;
}
const std::vector<EnumName<LrSchedule>>& enumNames(LrSchedule) {
    static const std::vector<EnumName<LrSchedule>> names = {{LrSchedule::Constant, "constant"},
                                                            {LrSchedule::Warmup, "warmup"},
                                                            {LrSchedule::Cosine, "cosine"},
                                                            {LrSchedule::Step, "step"},
                                                            {LrSchedule::OneCycle, "onecycle"}};
    return names;
}

const std::vector<EnumName<Task>>& enumNames(Task) {
    static const std::vector<EnumName<Task>> names = {{Task::Auto, "auto"},
                                                      {Task::Classification, "classification"},
                                                      {Task::Tokens, "tokens"},
                                                      {Task::Regression, "regression"}};
    return names;
}

const std::vector<EnumName<Switch>>& enumNames(Switch) {
    // true and false: the words a boolean spec field reads (and JSON's own for them).
    static const std::vector<EnumName<Switch>> names = {
        {Switch::Auto, "auto"}, {Switch::On, "true"}, {Switch::Off, "false"}};
    return names;
}

const std::vector<EnumName<DeviceKind>>& enumNames(DeviceKind) {
    static const std::vector<EnumName<DeviceKind>> names = {
        {DeviceKind::Auto, "auto"}, {DeviceKind::Cpu, "cpu"}, {DeviceKind::Cuda, "cuda"}};
    return names;
}

}  // namespace ampbench::config
