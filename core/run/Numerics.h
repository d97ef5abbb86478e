#pragma once
// One observation of a tensor's numerics against the range of a number format (the
// one it is cast to, run::NumberFormat): a parameter's gradient, a module's output or
// a tensor an FP8 layer casts, at one optimizer step. No LibTorch here: the store, the
// analysis and the GUI read these without Torch's headers.
#include <cstdint>
#include <optional>
#include <string>

namespace ampbench::run {

/// A parameter's gradient, a module's output, or a tensor as an FP8 layer casts it
/// ("blocks.0.qkv:input", "blocks.0.qkv:weight", "blocks.0.qkv:grad_output").
enum class NumericsKind { Grad, Activation, Cast };

struct NumericsRecord {
    int64_t step = 0;  ///< optimizer step, 1-based
    NumericsKind kind = NumericsKind::Grad;
    /// parameter ("blocks.0.qkv.weight"), module path ("blocks.0.qkv") or cast tensor
    /// ("blocks.0.qkv:input")
    std::string name;
    /// The number format (run::NumberFormat's name) the statistics are against.
    std::string format = "fp16";
    /// Largest |value| as scaled (gradients: unscaled × loss scale; cast tensors: × the
    /// scale); +inf when any value is inf or NaN.
    double absmax = 0.0;
    /// Share of all values (0…1) that are non-zero and finite but, as scaled, below
    /// the format's smallest subnormal (they would flush to zero) ...
    double underflow_subnormal = 0.0;
    /// ... and below its smallest normal (they would lose precision or flush).
    double underflow_normal = 0.0;
    /// Share of all values (0…1) that are finite but, as scaled, above the format's
    /// largest finite value: a saturating cast clips them, any other overflows.
    double saturated = 0.0;
    /// log2(largest of the format / absmax): doublings of the scale left before the
    /// format overflows; +inf for an all-zero tensor, -inf when a value is already
    /// non-finite.
    double headroom_log2 = 0.0;
    int64_t nonfinite = 0;  ///< values that are inf or NaN
    int64_t numel = 0;
    double loss_scale = 1.0;  ///< the scale the values were taken at (1 without a scaler)
    /// The per-tensor scale the values were multiplied by before the cast (an FP8
    /// layer's); 1 when none. Apart from loss_scale.
    double scale = 1.0;
    std::string dtype;  ///< of the observed tensor: "float32", "float16", "bfloat16"
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
    switch (kind) {
        case NumericsKind::Grad:
            return "grad";
        case NumericsKind::Activation:
            return "activation";
        case NumericsKind::Cast:
            return "cast";
    }
    return "grad";
}
inline std::optional<NumericsKind> numericsKindFromString(const std::string& text) {
    if (text == "grad") {
        return NumericsKind::Grad;
    }
    if (text == "activation") {
        return NumericsKind::Activation;
    }
    if (text == "cast") {
        return NumericsKind::Cast;
    }
    return std::nullopt;
}

}  // namespace ampbench::run
