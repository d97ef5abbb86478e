#include "core/data/FileDatasets.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <tuple>
#include <utility>

#include "core/data/DataError.h"
#include "core/data/private/CsvTable.h"
#include "core/data/private/ImageFolder.h"
#include "core/data/private/Npy.h"
#include "core/data/private/Source.h"
#include "core/data/private/Split.h"

namespace fs = std::filesystem;

namespace ampbench::data {
namespace {

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string listText(const std::vector<double>& values) {
    if (values.size() == 1) {
        return number(values[0]);
    }
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        out += (i ? ", " : "") + number(values[i]);
    }
    return out + "]";
}

/// int32/int64 inputs are token ids: kept as integers, never scaled or normalised.
bool tokenIds(c10::ScalarType t) {
    return t == at::kInt || t == at::kLong;
}

/// Integer targets are class labels; floating ones regression values.
bool classLabels(c10::ScalarType t) {
    return t == at::kBool || t == at::kByte || t == at::kInt || t == at::kLong;
}

std::vector<int64_t> rowShape(const at::Tensor& t) {
    return std::vector<int64_t>(t.sizes().begin() + 1, t.sizes().end());
}

/// More classes (or a larger vocabulary) than any model here is built for: a label
/// of 10^9 would ask for a head of 10^9 outputs, 2^31 overflows the class count.
constexpr int64_t kMaxClasses = 1000000;

/// The largest value of integer data (-1 when there is none), all checked to be from
/// 0 to kMaxClasses - 1: DataError naming where they are and the first row with a
/// value outside, before anything is built from it.
int64_t maxLabel(const at::Tensor& values, const std::string& where, const std::string& what) {
    if (values.numel() == 0) {
        return -1;
    }
    auto v = values.scalar_type() == at::kBool ? values.to(at::kLong) : values;
    auto firstRow = [&](const at::Tensor& bad) {
        return bad.reshape({v.size(0), -1}).any(1).nonzero()[0][0].item<int64_t>();
    };
    if (v.min().item<int64_t>() < 0) {
        auto row = firstRow(v < 0);
        throw DataError(where + ": row " + std::to_string(row) + " holds " + what + " " +
                        std::to_string(v[row].min().item<int64_t>()) + " (" + what +
                        "s must be 0 or more)");
    }
    const int64_t top = v.max().item<int64_t>();
    if (top >= kMaxClasses) {
        auto row = firstRow(v >= kMaxClasses);
        throw DataError(where + ": row " + std::to_string(row) + " holds " + what + " " +
                        std::to_string(v[row].max().item<int64_t>()) + ": " + what +
                        "s from 0 to " + std::to_string(kMaxClasses - 1) +
                        " are accepted (more than 1,000,000 " +
                        (what == "token id" ? "tokens" : "classes") + " are refused)");
    }
    return top;
}

class FileDataset final : public Dataset {
  public:
    FileDataset(const config::DataSpec& spec, std::shared_ptr<const Source> train, Validation val,
                std::vector<std::string> class_names);
    InputShape shape() const override { return shape_; }
    int64_t trainSize() const override { return train_rows_.size(0); }
    int64_t valSize() const override { return val_rows_.size(0); }
    Batch trainBatch(const at::Tensor& idx) const override {
        return convert(train_->read(train_rows_.index_select(0, idx)));
    }
    Batch valBatch(int64_t start, int64_t count) const override {
        return convert(val_->read(val_rows_.slice(0, start, start + count)));
    }
    bool synthetic() const override { return false; }
    std::string describe() const override { return describe_; }

  private:
    void checkValidation(const Source& val) const;
    void fillShape(const std::vector<std::string>& class_names);
    void normalisation(const config::DataSpec& spec);
    void describeAll(const config::DataSpec& spec, const Validation& val);
    Batch convert(Batch raw) const;

    std::shared_ptr<const Source> train_, val_;  ///< the same source for a split
    at::Tensor train_rows_, val_rows_;           ///< each part's rows in its source
    at::Tensor mean_, std_;                      ///< shaped to broadcast; undefined: none
    InputShape shape_;
    std::string describe_;
};

FileDataset::FileDataset(const config::DataSpec& spec, std::shared_ptr<const Source> train,
                         Validation val, std::vector<std::string> class_names)
    : train_(std::move(train)) {
    const int64_t n = train_->size();
    if (n == 0) {
        throw DataError(train_->name() + ": no samples");
    }
    if (val.source) {
        checkValidation(*val.source);
        val_ = val.source;
        train_rows_ = at::arange(n, at::kLong);
        val_rows_ = at::arange(val_->size(), at::kLong);
    } else {
        val_ = train_;
        std::tie(train_rows_, val_rows_) = splitRows(n, spec.val_fraction);
        if (train_rows_.size(0) == 0) {
            throw DataError(train_->name() + ": its " + std::to_string(n) +
                            " samples leave none for training once data.val_fraction " +
                            number(spec.val_fraction) + " is held out");
        }
    }
    fillShape(class_names);
    normalisation(spec);
    describeAll(spec, val);
}

void FileDataset::checkValidation(const Source& val) const {
    const auto& t = *train_;
    if (val.size() == 0) {
        throw DataError(val.name() + ": no samples");
    }
    auto mismatch = [&](const std::string& what, const std::string& found,
                        const std::string& expected) {
        throw DataError(val.name() + ": " + what + " " + found + ", but the training data's (" +
                        t.name() + ") are " + expected);
    };
    if (val.sampleShape() != t.sampleShape()) {
        mismatch("samples have shape", shapeText(val.sampleShape()), shapeText(t.sampleShape()));
    }
    if (rowShape(val.targets()) != rowShape(t.targets())) {
        mismatch("targets have shape", shapeText(rowShape(val.targets())),
                 shapeText(rowShape(t.targets())));
    }
    auto kind = [](c10::ScalarType s) { return tokenIds(s) ? "token ids" : "values"; };
    if (tokenIds(val.inputType()) != tokenIds(t.inputType())) {
        mismatch("inputs are", kind(val.inputType()), kind(t.inputType()));
    }
    auto label = [](const at::Tensor& y) {
        return classLabels(y.scalar_type()) ? "class labels" : "regression values";
    };
    if (classLabels(val.targets().scalar_type()) != classLabels(t.targets().scalar_type())) {
        mismatch("targets are", label(val.targets()), label(t.targets()));
    }
}

void FileDataset::fillShape(const std::vector<std::string>& class_names) {
    const auto sample = train_->sampleShape();
    const auto target = rowShape(train_->targets());
    if (sample.size() > 3) {
        throw DataError(train_->name() + ": samples of shape " + shapeText(sample) +
                        ": expected at most 3 dimensions (features, H×W or C×H×W)");
    }
    shape_.sample = sample;
    shape_.target = target;
    shape_.class_names = class_names;
    shape_.channels = sample.size() == 3 ? static_cast<int>(sample[0]) : 1;
    shape_.height = sample.size() >= 2 ? static_cast<int>(sample[sample.size() - 2]) : 1;
    shape_.width = static_cast<int>(sample.back());

    std::vector<const Source*> sources = {train_.get()};
    if (val_ != train_) {
        sources.push_back(val_.get());
    }
    int64_t max_label = -1, max_token = -1;
    const bool labels = classLabels(train_->targets().scalar_type());
    if (static_cast<int64_t>(class_names.size()) > kMaxClasses) {
        throw DataError(train_->targetsWhere() + ": " + std::to_string(class_names.size()) +
                        " different labels: more than 1,000,000 classes are refused");
    }
    for (const auto* s : sources) {
        if (labels) {
            max_label =
                std::max(max_label, maxLabel(s->targets(), s->targetsWhere(), "class label"));
        }
        if (tokenIds(s->inputType())) {
            max_token = std::max(max_token, maxLabel(s->inputs(), s->inputsWhere(), "token id"));
        }
    }
    shape_.float_target = !labels;
    shape_.classes =
        labels ? static_cast<int>(std::max<int64_t>(max_label + 1, int64_t(class_names.size())))
               : 0;
    if (tokenIds(train_->inputType())) {
        shape_.vocab = static_cast<int>(max_token + 1);
        if (labels && sample.size() == 1 && target == sample) {
            // Token sequences with a token target per position: a language model's data.
            shape_.vocab = static_cast<int>(std::max(max_token, max_label) + 1);
            shape_.seq_len = static_cast<int>(sample[0]);
            shape_.classes = shape_.vocab;
            shape_.channels = shape_.height = shape_.width = 0;
        }
    }
}

void FileDataset::normalisation(const config::DataSpec& spec) {
    if (spec.mean.empty() && spec.std.empty()) {
        return;
    }
    if (tokenIds(train_->inputType())) {
        throw DataError(std::string(spec.mean.empty() ? "data.std" : "data.mean") + ": " +
                        train_->name() + " holds token ids (" + dtypeName(train_->inputType()) +
                        "), which are not normalised");
    }
    const auto& sample = shape_.sample;
    const bool features = sample.size() == 1;
    const int64_t count = sample.size() == 3 || features ? sample[0] : 1;
    const std::string unit = features ? "features" : "channels";
    std::vector<int64_t> view(sample.size() + 1, 1);
    auto make = [&](const std::vector<double>& values, const char* field, double fill) {
        if (values.empty()) {
            return at::full({1}, fill, at::kFloat);
        }
        if (values.size() != 1 && static_cast<int64_t>(values.size()) != count) {
            throw DataError(std::string(field) + " has " + std::to_string(values.size()) +
                            " values, but " + train_->name() + " has " + std::to_string(count) +
                            " " + unit + ": give one value for all, or one per " +
                            unit.substr(0, unit.size() - 1));
        }
        auto t = at::tensor(values, at::kDouble).to(at::kFloat);
        if (values.size() == 1 || sample.size() == 2) {
            return t;
        }
        view[1] = count;
        return t.view(view);
    };
    mean_ = make(spec.mean, "data.mean", 0.0);
    std_ = make(spec.std, "data.std", 1.0);
    for (size_t i = 0; i < spec.std.size(); ++i) {
        if (!(spec.std[i] > 0)) {
            throw DataError("data.std: value " + number(spec.std[i]) + " (at " + std::to_string(i) +
                            ") must be above 0");
        }
    }
}

void FileDataset::describeAll(const config::DataSpec& spec, const Validation& val) {
    const auto x = train_->inputType();
    std::string d = train_->name() + ": " + train_->describeInputs();
    if (x == at::kByte) {
        d += " scaled to [0, 1]";
    } else if (x == at::kBool || x == at::kHalf || x == at::kDouble) {
        d += " as float32";
    } else if (x == at::kInt) {
        d += " as int64";
    }
    if (tokenIds(x)) {
        d += " (token ids, vocabulary " + std::to_string(shape_.vocab) + ")";
    }
    if (mean_.defined()) {
        d += ", normalised (mean " + (spec.mean.empty() ? "0" : listText(spec.mean)) + ", std " +
             (spec.std.empty() ? "1" : listText(spec.std)) + ")";
    }
    d += ", " + train_->describeTargets();
    const auto y = train_->targets().scalar_type();
    if (y != at::kLong && y != at::kFloat) {
        d += std::string(" as ") + (classLabels(y) ? "int64" : "float32");
    }
    if (shape_.float_target) {
        d += " (regression values)";
    } else if (shape_.tokens()) {
        d += " (next tokens)";
    } else {
        d += " (" + std::to_string(shape_.classes) + " classes";
        const auto& names = shape_.class_names;
        for (size_t i = 0; i < names.size() && i < 10; ++i) {
            d += (i ? ", " : ": ") + names[i];
        }
        d += std::string(names.size() > 10 ? ", ...)" : ")");
    }
    if (val.source) {
        d += "; validation: " + val.origin + " (" + std::to_string(valSize()) + ")";
    } else if (valSize() == 0) {
        d += "; no validation part";
    } else {
        d += "; validation: " + number(spec.val_fraction * 100) + "% of it (" +
             std::to_string(valSize()) + ")";
    }
    describe_ = d;
}

Batch FileDataset::convert(Batch raw) const {
    auto x = raw.input;
    switch (x.scalar_type()) {
        case at::kByte:
            x = x.to(at::kFloat).div_(255);
            break;
        case at::kBool:
        case at::kHalf:
        case at::kDouble:
            x = x.to(at::kFloat);
            break;
        case at::kInt:
            x = x.to(at::kLong);
            break;
        default:
            break;
    }
    if (mean_.defined()) {
        x = (x - mean_) / std_;  // out of place: a float32 input may view the file
    }
    auto y = raw.target;
    if (classLabels(y.scalar_type())) {
        y = y.to(at::kLong);
    } else {
        y = y.to(at::kFloat);
    }
    return {x.contiguous(), y.contiguous()};
}

bool endsWithNoCase(const std::string& s, const std::string& suffix) {
    if (s.size() < suffix.size()) {
        return false;
    }
    return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
    });
}

/// The labels' .npy beside an inputs' .npy: the last "x" of the file name's stem
/// replaced by "y" (x.npy → y.npy, train_X.npy → train_Y.npy).
std::string labelsBeside(const std::string& inputs, const std::string& hint) {
    fs::path p(inputs);
    auto stem = p.stem().string();
    auto pos = stem.find_last_of("xX");
    if (pos == std::string::npos) {
        throw DataError(inputs +
                        ": no labels' file to infer (the file name has no 'x' to turn "
                        "into 'y'): " +
                        hint);
    }
    stem[pos] = stem[pos] == 'x' ? 'y' : 'Y';
    return (p.parent_path() / (stem + p.extension().string())).string();
}

/// A row per sample: DataError for an array that holds a single value.
void requireRows(const at::Tensor& t, const std::string& where) {
    if (t.dim() == 0) {
        throw DataError(where + ": holds a single value, not one row per sample");
    }
}

/// An .npz's inputs `x` and targets `y`. `name` names the pair in messages.
std::shared_ptr<const Source> npzSource(NpzFile& npz, const std::string& path,
                                        const std::string& name, const std::string& x,
                                        const std::string& y) {
    NamedArray xa{npz.read(x), x, path + " (" + x + ")"};
    NamedArray ya{npz.read(y), y, path + " (" + y + ")"};
    requireRows(xa.data, xa.where);
    requireRows(ya.data, ya.where);
    if (xa.data.size(0) != ya.data.size(0)) {
        throw DataError(path + ": " + y + " has " + std::to_string(ya.data.size(0)) + " rows but " +
                        x + " has " + std::to_string(xa.data.size(0)));
    }
    return std::make_shared<TensorSource>(name, std::move(xa), std::move(ya));
}

/// An inputs' .npy and its labels' .npy, both mapped. `labels` empty: beside it.
std::shared_ptr<const Source> npySource(const std::string& path, std::string labels,
                                        const std::string& hint) {
    auto x = mapNpy(path);
    if (labels.empty()) {
        labels = labelsBeside(path, hint);
        std::error_code ec;
        if (!fs::exists(labels, ec)) {
            throw DataError(path + ": its labels " + labels + " do not exist (" + hint + ")");
        }
    }
    auto y = mapNpy(labels);
    requireRows(x, path);
    requireRows(y, labels);
    if (x.size(0) != y.size(0)) {
        throw DataError(path + ": labels " + labels + " have " + std::to_string(y.size(0)) +
                        " rows but the inputs have " + std::to_string(x.size(0)));
    }
    return std::make_shared<TensorSource>(path, NamedArray{x, "inputs", path},
                                          NamedArray{y, "labels " + labels, labels});
}

}  // namespace

TensorSource::TensorSource(std::string name, NamedArray x, NamedArray y)
    : name_(std::move(name)), x_(std::move(x)), y_(std::move(y)) {
    if (x_.data.dim() == 1) {
        x_.data = x_.data.unsqueeze(1);
    }
}

std::vector<int64_t> TensorSource::sampleShape() const {
    return rowShape(x_.data);
}

Batch TensorSource::read(const at::Tensor& rows) const {
    return {x_.data.index_select(0, rows), y_.data.index_select(0, rows)};
}

std::string TensorSource::describeInputs() const {
    return x_.label + " " + dtypeName(inputType()) + " " + shapeText(x_.data.sizes().vec());
}

std::string TensorSource::describeTargets() const {
    return y_.label + " " + dtypeName(y_.data.scalar_type()) + " " +
           shapeText(y_.data.sizes().vec());
}

std::shared_ptr<const Dataset> makeFileDataset(const config::DataSpec& spec,
                                               std::shared_ptr<const Source> train, Validation val,
                                               std::vector<std::string> class_names) {
    return std::make_shared<FileDataset>(spec, std::move(train), std::move(val),
                                         std::move(class_names));
}

std::shared_ptr<const Dataset> openArrays(const config::DataSpec& spec) {
    if (spec.path.empty()) {
        throw DataError("data.path is empty: name an .npz, or the inputs' .npy");
    }
    auto open = [&](const std::string& path, const std::string& labels, const std::string& hint,
                    Validation* inside) -> std::shared_ptr<const Source> {
        if (!endsWithNoCase(path, ".npz")) {
            return npySource(path, labels, hint);
        }
        NpzFile npz(path);
        auto source = npzSource(npz, path, path, "x", "y");
        if (inside && (npz.has("x_val") || npz.has("y_val"))) {
            *inside = {npzSource(npz, path, path + " (x_val, y_val)", "x_val", "y_val"),
                       "x_val, y_val"};
        }
        return source;
    };
    Validation val;
    auto train = open(spec.path, spec.labels, "set data.labels to the labels' .npy",
                      spec.val_path.empty() ? &val : nullptr);
    if (!spec.val_path.empty()) {
        val = {open(spec.val_path, "",
                    "name the validation inputs and labels alike but for an 'x' and a 'y', "
                    "as val_x.npy and val_y.npy",
                    nullptr),
               spec.val_path};
    }
    return makeFileDataset(spec, std::move(train), std::move(val));
}

std::shared_ptr<const Dataset> openImageFolder(const config::DataSpec& spec) {
    if (spec.path.empty()) {
        throw DataError("data.path is empty: name the folder that holds one sub-folder per class");
    }
    auto train = std::make_shared<ImageFolderSource>(spec.path, spec.channels, spec.image_size);
    Validation val;
    if (!spec.val_path.empty()) {
        val = {std::make_shared<ImageFolderSource>(spec.val_path, spec.channels, spec.image_size,
                                                   train->classNames()),
               spec.val_path};
    }
    auto names = train->classNames();
    return makeFileDataset(spec, std::move(train), std::move(val), std::move(names));
}

std::shared_ptr<const Dataset> openCsv(const config::DataSpec& spec) {
    if (spec.path.empty()) {
        throw DataError("data.path is empty: name the CSV file");
    }
    auto train = readCsv(spec.path, spec.label_column);
    std::vector<const CsvTable*> tables = {&train};
    CsvTable val_table;
    if (!spec.val_path.empty()) {
        val_table = readCsv(spec.val_path, spec.label_column);
        tables.push_back(&val_table);
    }
    auto labels = csvLabels(tables);
    auto source = [&](const CsvTable& t, size_t i) {
        return std::make_shared<TensorSource>(
            t.path, NamedArray{t.features, "features", t.path},
            NamedArray{labels.targets[i], "label '" + t.columns[t.label] + "'", t.path});
    };
    Validation val;
    if (!spec.val_path.empty()) {
        val = {source(val_table, 1), spec.val_path};
    }
    return makeFileDataset(spec, source(train, 0), std::move(val), labels.class_names);
}

}  // namespace ampbench::data
