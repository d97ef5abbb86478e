#pragma once
// The number formats a tensor can be cast to, as the per-layer numerics measure them:
// the largest finite value, the smallest normal and subnormal, the mantissa bits. No
// LibTorch here: the store, the analysis and the GUI name and describe formats too.
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::run {

struct NumberFormat {
    const char* name;           ///< "fp16", "bf16", "e4m3", "e5m2", "fp32"
    double largest;             ///< the largest finite value
    double smallest_normal;     ///< the smallest positive normal value
    double smallest_subnormal;  ///< the smallest positive value
    int mantissa_bits;          ///< stored fraction bits (the leading 1 not counted)
};

/// IEEE half: (2 - 2^-10) × 2^15, 2^-14, 2^-24.
inline constexpr NumberFormat kFp16{"fp16", 65504.0, 0x1p-14, 0x1p-24, 10};
/// bfloat16: fp32's exponent, 7 fraction bits: (2 - 2^-7) × 2^127, 2^-126, 2^-133.
inline constexpr NumberFormat kBf16{"bf16", 0x1.fep127, 0x1p-126, 0x1p-133, 7};
/// FP8 E4M3, the "fn" variant (torch.float8_e4m3fn): no infinities, one NaN pattern,
/// so its largest is 1.75 × 2^8 = 448; 2^-6, 2^-9.
inline constexpr NumberFormat kE4m3{"e4m3", 448.0, 0x1p-6, 0x1p-9, 3};
/// FP8 E5M2 (torch.float8_e5m2, IEEE-like): 1.75 × 2^15 = 57344, 2^-14, 2^-16.
inline constexpr NumberFormat kE5m2{"e5m2", 57344.0, 0x1p-14, 0x1p-16, 2};
/// IEEE single: (2 - 2^-23) × 2^127, 2^-126, 2^-149.
inline constexpr NumberFormat kFp32{"fp32", 0x1.fffffep127, 0x1p-126, 0x1p-149, 23};

/// Every format above, narrowest range first.
const std::vector<NumberFormat>& numberFormats();
/// The format of that name ("fp16", ...); none for any other text.
std::optional<NumberFormat> numberFormatNamed(const std::string& name);
/// "e4m3, e5m2, fp16, bf16, fp32": the names a format may have, for messages.
std::string numberFormatNames();

/// The format the tensors the numerics observe by default (parameter gradients and
/// module outputs) are measured against in an arm of `precision` (resolved: amp-fp16
/// or amp-bf16; an unresolved `amp` counts as amp-fp16, what it is on CUDA):
/// - fp16 for amp-fp16 and pure-fp16, where they are held in fp16;
/// - fp16 for fp32 too, as the reference: "would this tensor fit in fp16?";
/// - bf16 for amp-bf16, and for fp8, whose module outputs and parameter gradients are
///   bf16 or fp32 (only the tensors its FP8 layers cast are in e4m3 or e5m2, recorded
///   as NumericsKind::Cast against their own format).
const NumberFormat& formatOfArm(config::Precision precision);

/// "2^-24" for a power of two; else "%g".
std::string powerOfTwoText(double value);
/// "fp16 (largest 65504, smallest normal 2^-14, subnormal 2^-24)".
std::string describe(const NumberFormat& format);

}  // namespace ampbench::run
