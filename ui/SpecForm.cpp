#include "ui/SpecForm.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QVBoxLayout>
#include <limits>

#include "ui/SpecBindings.h"

namespace ampbench::ui {
namespace {

using config::ExperimentSpec;

constexpr int kIntMax = std::numeric_limits<int>::max();

QStringList names(std::initializer_list<const char*> list) {
    QStringList out;
    for (const char* n : list) {
        out << QString::fromLatin1(n);
    }
    return out;
}

QFormLayout* group(QVBoxLayout* column, const QString& title) {
    auto* box = new QGroupBox(title);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    column->addWidget(box);
    return form;
}

}  // namespace

SpecForm::SpecForm(QWidget* parent) : QWidget(parent), bindings_(new SpecBindings(this)) {
    SpecBindings& b = *bindings_;
    auto* columns = new QHBoxLayout(this);
    columns->setContentsMargins(0, 0, 0, 0);
    auto* left = new QVBoxLayout;
    auto* middle = new QVBoxLayout;
    auto* right = new QVBoxLayout;
    columns->addLayout(left, 1);
    columns->addLayout(middle, 1);
    columns->addLayout(right, 1);

    QFormLayout* f = group(left, tr("Experiment"));
    b.addText(
        f, tr("Name"), "name", [](Spec& s) -> std::string& { return s.name; },
        tr("Shown in the history and reports"));
    b.addIntList(
        f, tr("Seeds"), "seeds", [](const Spec& s) { return s.seeds; },
        [](Spec& s, const std::vector<uint64_t>& v) { s.seeds = v; },
        tr("One run per arm and seed, e.g. 1, 2, 3"));
    b.addChoice(
        f, tr("Device"), "device", names({"auto", "cpu", "cuda"}),
        [](const Spec& s) { return config::toString(s.device); },
        [](Spec& s, const std::string& v) {
            s.device = config::deviceFromString(v).value_or(s.device);
        },
        tr("auto = CUDA when available"));
    b.addInt<int>(
        f, tr("CPU threads"), "cpu_threads", [](Spec& s) -> int& { return s.cpu_threads; },
        tr("0 = every logical CPU"));
    b.addBool(
        f, tr("cuDNN benchmark"), "cudnn_benchmark",
        [](Spec& s) -> bool& { return s.cudnn_benchmark; }, tr("Let cuDNN pick kernels"));

    f = group(left, tr("Schedule"));
    b.addInt<int>(
        f, tr("Micro-batch"), "micro_batch", [](Spec& s) -> int& { return s.micro_batch; },
        tr("Samples per micro-batch (effective batch = micro-batch \u00d7 K)"));
    b.addInt<int64_t>(
        f, tr("Steps"), "steps", [](Spec& s) -> int64_t& { return s.steps; },
        tr("Micro-batches per run; every arm sees the same samples"));
    b.addInt<int>(
        f, tr("Epochs"), "epochs", [](Spec& s) -> int& { return s.epochs; },
        tr("When > 0, overrides steps"));
    b.addInt<int>(
        f, tr("Warm-up steps"), "warmup_steps", [](Spec& s) -> int& { return s.warmup_steps; },
        tr("Optimizer steps excluded from timing"));
    b.addInt<int64_t>(
        f, tr("Eval interval"), "eval_interval",
        [](Spec& s) -> int64_t& { return s.eval_interval; },
        tr("Micro-batches between evaluations; 0 = only at the end"));
    b.addInt<int>(
        f, tr("Eval batches"), "eval_batches", [](Spec& s) -> int& { return s.eval_batches; },
        tr("Validation batches per evaluation; 0 = the whole validation part"));

    f = group(middle, tr("Model"));
    b.addChoice(
        f, tr("Model"), "model.name", names({"mlp", "cnn", "resnet", "transformer"}),
        [](const Spec& s) { return s.model.name; },
        [](Spec& s, const std::string& v) { s.model.name = v; }, tr("Built-in model"));
    b.addInt<int>(
        f, tr("Width"), "model.width", [](Spec& s) -> int& { return s.model.width; },
        tr("Base channels, hidden units or d_model"));
    b.addInt<int>(
        f, tr("Depth"), "model.depth", [](Spec& s) -> int& { return s.model.depth; },
        tr("Conv blocks, hidden layers or transformer layers"));
    b.addIntList(
        f, tr("ResNet blocks"), "model.blocks",
        [](const Spec& s) {
            return std::vector<uint64_t>(s.model.blocks.begin(), s.model.blocks.end());
        },
        [](Spec& s, const std::vector<uint64_t>& v) {
            s.model.blocks.clear();
            for (uint64_t b : v) {
                s.model.blocks.push_back(static_cast<int>(std::min<uint64_t>(b, kIntMax)));
            }
        },
        tr("Blocks per stage, e.g. 3, 4, 6, 3"));
    b.addBool(
        f, tr("Bottleneck"), "model.bottleneck",
        [](Spec& s) -> bool& { return s.model.bottleneck; }, tr("ResNet-50 style blocks"));
    b.addInt<int>(
        f, tr("Heads"), "model.heads", [](Spec& s) -> int& { return s.model.heads; },
        tr("Attention heads; must divide the width"));
    b.addDouble(
        f, tr("Dropout"), "model.dropout", [](Spec& s) -> double& { return s.model.dropout; },
        tr("0 \u2264 p < 1"));

    f = group(middle, tr("Optimizer"));
    b.addChoice(
        f, tr("Optimizer"), "optimizer.kind", names({"sgd", "adamw"}),
        [](const Spec& s) { return config::toString(s.optimizer.kind); },
        [](Spec& s, const std::string& v) {
            s.optimizer.kind = config::optimizerFromString(v).value_or(s.optimizer.kind);
        },
        tr("SGD with momentum or AdamW"));
    b.addDouble(
        f, tr("Learning rate"), "optimizer.lr", [](Spec& s) -> double& { return s.optimizer.lr; },
        tr("Base rate, before each arm's LR rule"));
    b.addDouble(
        f, tr("Momentum"), "optimizer.momentum",
        [](Spec& s) -> double& { return s.optimizer.momentum; }, tr("SGD"));
    b.addDouble(
        f, tr("Weight decay"), "optimizer.weight_decay",
        [](Spec& s) -> double& { return s.optimizer.weight_decay; }, tr("0 \u2026 1"));
    b.addDouble(
        f, tr("Beta 1"), "optimizer.beta1", [](Spec& s) -> double& { return s.optimizer.beta1; },
        tr("AdamW"));
    b.addDouble(
        f, tr("Beta 2"), "optimizer.beta2", [](Spec& s) -> double& { return s.optimizer.beta2; },
        tr("AdamW"));
    b.addDouble(
        f, tr("Epsilon"), "optimizer.eps", [](Spec& s) -> double& { return s.optimizer.eps; },
        tr("AdamW"));

    f = group(right, tr("Data"));
    b.addChoice(
        f, tr("Dataset"), "data.name",
        names({"fashion-mnist", "synthetic-images", "synthetic-tokens"}),
        [](const Spec& s) { return s.data.name; },
        [](Spec& s, const std::string& v) { s.data.name = v; }, tr("Training data"));
    b.addText(
        f, tr("Folder"), "data.dir", [](Spec& s) -> std::string& { return s.data.dir; },
        tr("Fashion-MNIST's four IDX .gz files; empty = Debian's location"));
    b.addDouble(
        f, tr("Validation fraction"), "data.val_fraction",
        [](Spec& s) -> double& { return s.data.val_fraction; },
        tr("Held out from the training images"));
    b.addInt<int>(
        f, tr("Channels"), "data.channels", [](Spec& s) -> int& { return s.data.channels; },
        tr("Synthetic images"));
    b.addInt<int>(
        f, tr("Height"), "data.height", [](Spec& s) -> int& { return s.data.height; },
        tr("Synthetic images"));
    b.addInt<int>(
        f, tr("Width"), "data.width", [](Spec& s) -> int& { return s.data.width; },
        tr("Synthetic images"));
    b.addInt<int>(
        f, tr("Classes"), "data.classes", [](Spec& s) -> int& { return s.data.classes; },
        tr("Synthetic images"));
    b.addInt<int>(
        f, tr("Sequence length"), "data.seq_len", [](Spec& s) -> int& { return s.data.seq_len; },
        tr("Synthetic tokens"));
    b.addInt<int>(
        f, tr("Vocabulary"), "data.vocab", [](Spec& s) -> int& { return s.data.vocab; },
        tr("Synthetic tokens"));
    b.addInt<int>(
        f, tr("Prefetch"), "data.prefetch", [](Spec& s) -> int& { return s.data.prefetch; },
        tr("Batches prepared ahead by the background thread"));
    right->addStretch(1);
    left->addStretch(1);
    middle->addStretch(1);
    connect(bindings_, &SpecBindings::edited, this, [this](const QString& field) {
        updateEnabled();
        Q_EMIT edited(field);
    });
    updateEnabled();
}

void SpecForm::setSpec(const Spec& spec) {
    bindings_->load(spec);
    updateEnabled();
}

void SpecForm::readInto(Spec& spec, std::vector<config::FieldError>& errors) const {
    bindings_->readInto(spec, errors);
}

QWidget* SpecForm::widgetFor(const std::string& field) const {
    return bindings_->widgetFor(field);
}

std::vector<config::FieldError> SpecForm::markErrors(
    const std::vector<config::FieldError>& errors) {
    return bindings_->markErrors(errors);
}

void SpecForm::updateEnabled() {
    auto text = [this](const char* field) {
        auto* combo = qobject_cast<QComboBox*>(widgetFor(field));
        return combo ? combo->currentText() : QString();
    };
    auto enable = [this](const char* field, bool on) {
        if (QWidget* w = widgetFor(field)) {
            w->setEnabled(on);
        }
    };
    const QString model = text("model.name");
    const QString data = text("data.name");
    const bool sgd = text("optimizer.kind") == "sgd";
    enable("model.blocks", model == "resnet");
    enable("model.bottleneck", model == "resnet");
    enable("model.heads", model == "transformer");
    for (const char* f : {"data.channels", "data.height", "data.width", "data.classes"}) {
        enable(f, data == "synthetic-images");
    }
    enable("data.seq_len", data == "synthetic-tokens");
    enable("data.vocab", data == "synthetic-tokens");
    enable("data.dir", data == "fashion-mnist");
    enable("optimizer.momentum", sgd);
    for (const char* f : {"optimizer.beta1", "optimizer.beta2", "optimizer.eps"}) {
        enable(f, !sgd);
    }
    if (auto* epochs = qobject_cast<QSpinBox*>(widgetFor("epochs"))) {
        enable("steps", epochs->value() == 0);
    }
}

}  // namespace ampbench::ui
