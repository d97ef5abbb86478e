#pragma once
// The experiment spec: what to train, how, and in which arms. Plain data; every
// field is described once in SpecFields.h, from which JSON (SpecJson.h), equality
// and range checks (Validation.h) are derived.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampbench::config {

/// The largest seed: the store keeps a run's seed as a 64-bit signed integer, so that
/// a seed reads in the file (and in the sqlite3 shell) as it was given.
constexpr uint64_t kMaxSeed = 9223372036854775807ULL;

/// `amp` resolves on the device: fp16 with loss scaling on CUDA, bf16 on CPU.
/// `pure-fp16` is a negative control: the model itself in fp16 (model.half()), no
/// fp32 master weights, no autocast, no loss scaling.
/// `fp8`: the Linear layers of built-in models multiply in FP8 (e4m3 forward, e5m2
/// gradients) with per-tensor scales, everything else under bf16 autocast; CUDA with
/// compute capability 8.9 or later and LibTorch 2.1 or later.
enum class Precision { Fp32, Amp, AmpFp16, AmpBf16, PureFp16, Fp8 };
/// How an FP8 arm scales each tensor before the cast: `delayed` from the largest
/// |value| over the last fp8_history casts (Transformer Engine's DelayedScaling, one
/// pass); `current` from this tensor's own (a reduction pass before the cast).
enum class Fp8Recipe { Delayed, Current };
enum class LrRule { Linear, Sqrt, None };
enum class OptimizerKind { Sgd, AdamW };
enum class DeviceKind { Auto, Cpu, Cuda };
/// A switch the workbench may set itself: auto (its choice, stated where it is made),
/// or on or off as the user said.
enum class Switch { Auto, On, Off };
/// What the model's output is compared with. `auto`: a built-in model's own task;
/// for a model file, from the data (integer labels per sample: classification,
/// per position: tokens, floating-point targets: regression).
enum class Task { Auto, Classification, Tokens, Regression };
/// How the learning rate moves over a run's optimizer steps (LrSchedule.h).
enum class LrSchedule { Constant, Warmup, Cosine, Step, OneCycle };

/// The dynamic loss scaler's settings, PyTorch's GradScaler defaults; amp::LossScaler
/// takes them as they are.
struct ScalerSpec {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    int growth_interval = 2000;
    bool operator==(const ScalerSpec&) const;  ///< every field of its table
    bool operator!=(const ScalerSpec& other) const { return !(*this == other); }
};

struct ArmSpec {
    std::string name;  ///< unique within the experiment, e.g. "fp32"
    Precision precision = Precision::Fp32;
    int accumulation = 1;  ///< micro-batches per optimizer step (K)
    /// Samples per micro-batch of this arm; 0 = the experiment's. An arm with its own
    /// trains the samples of the experiment's micro_steps (microBatchOf, armMicroSteps),
    /// and its LR rule follows its effective batch against the experiment's micro-batch.
    int micro_batch = 0;
    /// Data-parallel processes (one per GPU on CUDA, Gloo processes on CPU); each trains
    /// its own shard of every global batch, gradients are averaged once per step.
    int ranks = 1;
    LrRule lr_rule = LrRule::Linear;  ///< how lr follows the global batch (micro × K × ranks)
    ScalerSpec scaler;                ///< used by fp16 only
    bool loss_scaling = true;         ///< fp16: false is a negative control (no scaler)
    double grad_clip = 0.0;           ///< max global L2 norm; 0 disables clipping
    bool tf32 = false;                ///< allow TF32 matmuls/convolutions (CUDA, fp32 arms)
    bool channels_last = false;       ///< NHWC memory format for convolutional models
    bool checkpointing = false;       ///< recompute activations per block in backward
    bool cuda_graph = false;          ///< capture the whole step in a CUDA graph (K = 1, CUDA)
    /// FP32 islands: modules (names or glob patterns from the model's module tree,
    /// separated by ';') that run with autocast off and their inputs cast to fp32.
    std::string fp32_modules;
    Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  ///< fp8 arms: how the scales are found
    int fp8_history = 16;  ///< fp8 delayed: casts whose largest |value| the scale follows
    /// fp8: the scale leaves 2^margin of room below the format's largest value.
    int fp8_margin = 0;
    /// fp8: which Linear layers compute in FP8: "auto" (empty: from their shapes, where
    /// the matmul time saved exceeds the casts'), "all" (every layer the scaled matmul
    /// takes), or names and glob patterns (head;fc1, blocks.*.fc2).
    std::string fp8_modules;
    int repeats = 0;  ///< seeds for this arm; 0 = the experiment's seeds
    /// Added to each of the arm's seeds: a copy of the baseline on other seeds is an
    /// A/A check (the verdict's false alarms and the timing noise of the machine).
    int seed_offset = 0;
    bool operator==(const ArmSpec&) const;  ///< every field of its table
    bool operator!=(const ArmSpec& other) const { return !(*this == other); }
};

struct ModelSpec {
    std::string name = "cnn";  ///< mlp | cnn | resnet | transformer | torchscript
    std::string file;          ///< torchscript: the saved module (.pt); script: the .py
    /// script: the interpreter that runs it; empty = $AMPBENCH_PYTHON, else python3
    std::string python;
    /// script: its command-line arguments, split as a shell would (util/Words.h)
    std::string args;
    Task task = Task::Auto;
    double label_smoothing = 0.0;  ///< classification and tokens: cross-entropy's smoothing
    int width = 32;                ///< base channels (cnn, resnet) or hidden size (mlp) or d_model
    int depth = 2;                 ///< conv blocks, hidden layers, or transformer layers
    std::vector<int> blocks;       ///< resnet: blocks per stage, e.g. {3,4,6,3}
    bool bottleneck = false;       ///< resnet: bottleneck (ResNet-50) instead of basic blocks
    int heads = 4;                 ///< transformer attention heads
    /// transformer: "scaled" (softmax(q k^T / sqrt(d)) v, fused where LibTorch has it) or
    /// "unscaled" (q k^T without the 1/sqrt(d), the scores held in the autocast dtype)
    std::string attention = "scaled";
    double init_std = 0.02;  ///< transformer: N(0, σ) of linear and embedding weights (GPT-2's)
    double dropout = 0.0;
    bool operator==(const ModelSpec&) const;  ///< every field of its table
    bool operator!=(const ModelSpec& other) const { return !(*this == other); }
};

struct DataSpec {
    /// fashion-mnist | synthetic-images | synthetic-tokens | arrays | image-folder | csv
    std::string name = "fashion-mnist";
    std::string dir;            ///< fashion-mnist folder; empty = Debian's location
    std::string path;           ///< arrays (.npz/.npy), image folder or CSV file
    std::string labels;         ///< arrays: the labels' .npy beside an inputs .npy
    std::string val_path;       ///< validation data in the same format; empty = a fraction
    double val_fraction = 0.1;  ///< held out from the training data when val_path is empty
    std::string label_column;   ///< csv: the label's column (name or 0-based index); empty = last
    int image_size = 0;         ///< image folder: resize and centre-crop to this; 0 = as stored
    std::vector<double> mean;   ///< subtracted per channel (or feature) after scaling; empty = 0
    std::vector<double> std;    ///< divided per channel (or feature) after the mean; empty = 1
    int channels = 3;           ///< synthetic images; image folder: 1 (grey) or 3 (RGB)
    int height = 32;
    int width = 32;
    int classes = 10;   ///< synthetic images
    int seq_len = 128;  ///< synthetic tokens
    int vocab = 1024;   ///< synthetic tokens
    int prefetch = 4;   ///< batches prepared ahead by the background thread
    /// What evaluations measure: "validation" (held out from training) or "test"
    /// (the dataset's own test split: Fashion-MNIST's t10k images).
    std::string evaluate_on = "validation";
    bool operator==(const DataSpec&) const;  ///< every field of its table
    bool operator!=(const DataSpec& other) const { return !(*this == other); }
};

struct OptimizerSpec {
    OptimizerKind kind = OptimizerKind::Sgd;
    double lr = 0.05;
    double momentum = 0.9;  ///< SGD
    double weight_decay = 0.0;
    double beta1 = 0.9;  ///< AdamW
    double beta2 = 0.999;
    double eps = 1e-8;
    bool nesterov = false;  ///< SGD
    LrSchedule schedule = LrSchedule::Constant;
    double warmup_fraction = 0.0;  ///< linear warm-up's share of the run (onecycle: the rise)
    double step_fraction = 0.3;    ///< step: the lr is multiplied by gamma every this share
    double gamma = 0.1;            ///< step
    double min_lr_fraction = 0.0;  ///< cosine: the final lr as a fraction of lr
    bool operator==(const OptimizerSpec&) const;  ///< every field of its table
    bool operator!=(const OptimizerSpec& other) const { return !(*this == other); }
};

struct ExperimentSpec {
    std::string name = "experiment";
    ModelSpec model;
    DataSpec data;
    OptimizerSpec optimizer;
    int micro_batch = 64;
    /// Micro-batches per run (JSON "micro_steps", formerly "steps"). An arm with
    /// accumulation K makes micro_steps / K optimizer steps, so every arm sees the
    /// same samples; the database's `step` counts optimizer steps.
    int64_t micro_steps = 600;
    int epochs = 0;        ///< when > 0, overrides micro_steps: whole passes over the training part
    int warmup_steps = 5;  ///< optimizer steps excluded from timing statistics
    int64_t eval_interval = 200;  ///< in micro-steps; 0 = only at the end
    int eval_batches = 0;         ///< validation batches per eval; 0 = the whole validation part
    /// Optimizer steps between per-layer numerics records (gradients against fp16's
    /// range, module outputs); 0 = off, as timing runs should be.
    int64_t numerics_every = 0;
    std::vector<uint64_t> seeds = {1};  ///< each at most kMaxSeed, with an arm's offset too
    DeviceKind device = DeviceKind::Auto;
    int cpu_threads = 0;  ///< 0 = every logical CPU
    /// CUDA: the GPUs the runs are spread over (0 = every visible GPU); runs train
    /// side by side, one per GPU at a time unless `runs_per_gpu` allows more.
    int gpus = 0;
    /// CUDA: runs one GPU may hold at once (small runs; their step times are then
    /// not the GPU's alone and each such run says so).
    int runs_per_gpu = 1;
    /// CUDA: the quick answer to "does it converge alike": every arm that can is
    /// captured in a CUDA graph and the runs are packed on the GPUs, after a short timed
    /// pass of each arm alone (eager and graph) that the speed and memory figures come
    /// from. No effect on the CPU.
    bool fast_verdict = false;
    /// cuDNN autotuning (its kernels' rounding can differ between runs). auto: on,
    /// except under the fast verdict, where it is off (PyTorch's own default: the
    /// packed runs would each tune what one pass alone could not keep); true or false
    /// as given. cudnnBenchmark() resolves it.
    Switch cudnn_benchmark = Switch::Auto;
    /// Train the runs of one arm that differ only in their seed as one fused model
    /// (the built-in cnn and mlp; each run recorded as its own). auto: on under the
    /// fast verdict, else off; true or false as given. fuseSeeds() resolves it.
    Switch fuse_seeds = Switch::Auto;
    /// Deterministic kernels only (PyTorch's use_deterministic_algorithms, cuDNN
    /// deterministic and its benchmark off): the same seed gives the same losses.
    bool deterministic = false;
    /// Runs in round-robin over the arms, seed by seed (false: arm by arm).
    bool interleave = true;
    /// The verdict's tolerance on the final validation metric is the larger of 2σ of
    /// the baseline's seeds and this (accuracy as a fraction: 0.005 = half a point).
    double tolerance_margin = 0.0;
    std::string save_weights;  ///< torchscript: folder for each run's trained module; empty = none
    std::vector<ArmSpec> arms;
    bool operator==(const ExperimentSpec&) const;  ///< every field of its table
    bool operator!=(const ExperimentSpec& other) const { return !(*this == other); }
};

std::string toString(Precision p);
std::string toString(Fp8Recipe r);
std::string toString(LrRule r);
std::string toString(OptimizerKind k);
std::string toString(DeviceKind d);
std::string toString(Task t);
std::string toString(LrSchedule s);
std::optional<Precision> precisionFromString(const std::string& text);
std::optional<LrRule> lrRuleFromString(const std::string& text);
std::optional<OptimizerKind> optimizerFromString(const std::string& text);
/// Whether runs of `spec` let cuDNN autotune (cudnn_benchmark resolved; deterministic
/// turns it off on its own, where the trainer sets it).
bool cudnnBenchmark(const ExperimentSpec& spec);
/// How cudnn_benchmark was resolved, for the plan and the verdict ("off: auto under
/// the fast verdict, PyTorch's default").
std::string cudnnBenchmarkText(const ExperimentSpec& spec);
/// Whether the runs of each arm of `spec` train fused where they can (fuse_seeds
/// resolved).
bool fuseSeeds(const ExperimentSpec& spec);
std::optional<DeviceKind> deviceFromString(const std::string& text);
std::optional<Task> taskFromString(const std::string& text);

/// Whether the data are read from the user's files (arrays, image folder, CSV).
bool fileData(const DataSpec& data);

/// What is trained on what, one line for reports: "model file net.pt (task
/// classification) on arrays train.npz, validation val.npz".
std::string describeWorkload(const ExperimentSpec& spec);

/// Seeds an arm runs with: its own count of the experiment's seeds when repeats > 0,
/// each plus the arm's seed_offset.
std::vector<uint64_t> seedsForArm(const ExperimentSpec& spec, const ArmSpec& arm);

/// The micro-batch arm `arm` trains with: its own, else the experiment's.
int microBatchOf(const ExperimentSpec& spec, const ArmSpec& arm);
/// Micro-batches of its own micro-batch that arm `arm` trains for the experiment's
/// micro_steps: the same samples as micro_steps of the experiment's micro-batch (at
/// least one; micro_steps itself for an arm without a micro-batch of its own).
int64_t armMicroSteps(const ExperimentSpec& spec, const ArmSpec& arm);

/// Learning rate of an arm after its LR rule for its effective batch (its micro-batch
/// × K × ranks) against the experiment's micro-batch, which `optimizer.lr` is for.
double scaledLearningRate(const ExperimentSpec& spec, const ArmSpec& arm);

}  // namespace ampbench::config
