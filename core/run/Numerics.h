#pragma once
// One observation of a tensor's numerics against fp16's range: a parameter's
// gradient or a module's output at one optimizer step. No LibTorch here: the store,
// the analysis and the GUI read these without Torch's headers.
#include <cstdint>
#include <optional>
#include <string>

namespace ampbench::run {

/// fp16's range: the smallest subnormal (2^-24), the smallest normal (2^-14), the
/// largest finite value.
inline constexpr double kFp16MinSubnormal = 5.9604644775390625e-08;
inline constexpr double kFp16MinNormal = 6.103515625e-05;
inline constexpr double kFp16Max = 65504.0;

enum class NumericsKind { Grad, Activation };

struct NumericsRecord {
    int64_t step = 0;  ///< optimizer step, 1-based
    NumericsKind kind = NumericsKind::Grad;
    std::string name;  ///< parameter ("blocks.0.qkv.weight") or module path ("blocks.0.qkv")
    /// Largest |value| as scaled (gradients: unscaled × loss scale); +inf when any
    /// value is inf or NaN.
    double absmax = 0.0;
    /// Share of all values (0…1) that are non-zero and finite but, as scaled, below
    /// fp16's smallest subnormal (they would flush to zero) ...
    double underflow_subnormal = 0.0;
    /// ... and below its smallest normal (they would lose precision or flush).
    double underflow_normal = 0.0;
    /// log2(65504 / absmax): doublings of the scale left before fp16 overflows;
    /// +inf for an all-zero tensor, -inf when a value is already non-finite.
    double headroom_log2 = 0.0;
    int64_t nonfinite = 0;  ///< values that are inf or NaN
    int64_t numel = 0;
    double loss_scale = 1.0;  ///< the scale the values were taken at (1 without a scaler)
    std::string dtype;        ///< of the observed tensor: "float32", "float16", "bfloat16"
};

/// Where the first inf or NaN of a non-finite step appeared, found by replaying the
/// step's batch with every module output and gradient watched. Carried as a Warning
/// event's message (describe) and read back from it (overflowOriginFromMessage).
struct OverflowOrigin {
    int64_t step = 0;
    /// A module path ("blocks.3.qkv") or parameter name; empty for the loss itself.
    std::string name;
    /// "output", "output gradient" (the gradient flowing into the module's output in
    /// backward), "parameter gradient", or "loss".
    std::string where;
    std::string dtype;  ///< of the tensor that first held it: "float16", ...
    double loss_scale = 1.0;
};

/// "overflow first in `blocks.3.qkv` output, float16, at step 812, loss scale 65536"
std::string describe(const OverflowOrigin& origin);
std::optional<OverflowOrigin> overflowOriginFromMessage(const std::string& message);

inline const char* toString(NumericsKind kind) {
    return kind == NumericsKind::Grad ? "grad" : "activation";
}
inline std::optional<NumericsKind> numericsKindFromString(const std::string& text) {
    if (text == "grad") {
        return NumericsKind::Grad;
    }
    if (text == "activation") {
        return NumericsKind::Activation;
    }
    return std::nullopt;
}

}  // namespace ampbench::run
