#pragma once
// Every precision format, declared once and without LibTorch: what it is called, what
// it resolves to on each kind of device, the number format its numerics are measured
// against, and which of the workbench's features apply to it. Validation, planning,
// fusion, the verdict, the number formats and the editor's arms table read this row;
// amp::Precision (core/amp/Precision.cpp) is the half that trains it. A new format is
// a row here, its enumerator in ExperimentSpec.h and its class in amp/Precision.cpp.
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

struct PrecisionFormat {
    Precision id = Precision::Fp32;
    const char* name = "";          ///< as JSON, the arm shorthand and the CLI spell it
    Precision on_cpu;               ///< what it trains as on the CPU (amp: amp-bf16)
    Precision on_cuda;              ///< ... and on CUDA (amp: amp-fp16)
    const char* numerics_in;        ///< the number format its numerics measure against
    bool autocast = false;          ///< the forward under autocast (FP32 islands switch it off)
    bool loss_scaler = false;       ///< a dynamic loss scaler (the scaler fields apply)
    bool fuses_seeds = false;       ///< an arm's seeds can train as one fused model
    bool negative_control = false;  ///< expected to lose quality: it shows the verdict can tell
    bool tf32 = false;              ///< the TF32 switch applies (fp32 matmuls)
    const char* own_fields = "";    ///< the prefix of fields only it uses ("fp8_"), or empty
    const char* what = "";          ///< one line for the editor and --help
};

/// Every format, in the order the editor offers them.
const std::vector<PrecisionFormat>& precisionFormats();
/// The row of `p` (every enumerator has one).
const PrecisionFormat& formatOf(Precision p);
/// The format whose own fields spec field `path` ("fp8_history") is one of; null for
/// a field every format reads.
const PrecisionFormat* formatOwningField(const std::string& path);
/// Whether `path` is a field of another format than `p` (fp8_history on a bf16 arm).
bool fieldIsOtherFormats(const std::string& path, Precision p);

}  // namespace ampbench::config
