#pragma once
// The fused FP8 casts on the GPU: one pass reads a tensor (optionally through GELU),
// scales, saturates and writes it in FP8 and its transpose, takes its largest |value|
// and, where asked, its column sums (a Linear layer's bias gradient); the cast's last
// block then rolls the tensor's amax history and sets its next scale. Nothing is read
// back to the host and nothing else is launched per cast. The arithmetic is
// Fp8Scaling.h's. Compiled only where LibTorch has CUDA; plain types here, so this
// header needs neither CUDA nor LibTorch.
#include <cstdint>

namespace ampbench::amp::cuda {

enum class Element { Float, Half, BFloat16 };
enum class Fp8Format { E4m3, E5m2 };
/// What the cast applies to each value before scaling: nothing, the exact GELU
/// (x · Φ(x), as at::gelu without approximation), or a LayerNorm over each row
/// ((x - mean) · rstd · gamma + beta, CastJob::norm), computed in float32.
enum class Activation { None, Gelu, LayerNorm };

/// The LayerNorm a cast applies (Activation::LayerNorm): each row's mean and
/// 1 / sqrt(variance + eps) from rowStatistics, and the per-column gamma and beta.
struct RowNorm {
    const float* mean = nullptr;
    const float* rstd = nullptr;
    const float* gamma = nullptr;
    const float* beta = nullptr;
};

/// Per cast, optional: [finite values whose scaled |value| is over the format's
/// largest (saturated), non-zero values whose scaled |value| is below its smallest
/// subnormal (flushed), ... below its smallest normal, non-finite values]. Added
/// into; zero it first.
constexpr int kCastCounts = 4;

/// One tensor's scaling state on the device (Fp8Scaling): the cast's last block
/// pushes `*amax` into `history` (newest first), sets `*scale` = the format's largest
/// / (the history's largest finite entry) / margin_factor where that is positive, and
/// zeroes `*amax` and `*done`.
struct ScalingState {
    float* history = nullptr;  ///< null: no update
    int length = 0;
    float* amax = nullptr;
    float* scale = nullptr;
    unsigned int* done = nullptr;  ///< the blocks that finished; 0 between casts
};

/// One cast of the row-major `rows` × `cols` matrix at `in`.
struct CastJob {
    const void* in = nullptr;
    Element element = Element::BFloat16;
    int64_t rows = 0, cols = 0;
    Activation activation = Activation::None;
    void* out = nullptr;    ///< rows × cols bytes: saturate(act(in) × s), non-finite NaN
    void* out_t = nullptr;  ///< cols × rows bytes: its transpose, row-major
    Fp8Format format = Fp8Format::E4m3;
    /// s is `*scale` where set; else largest / `*amax_in` / margin_factor (1 where
    /// amax is 0 or not finite).
    const float* scale = nullptr;
    const float* amax_in = nullptr;
    float margin_factor = 1.f;
    float* inv_scale = nullptr;  ///< receives 1 / s
    /// Takes the largest |act(in)| (atomically: it must start at 0 or below the
    /// result; inf and NaN count as +inf). May be null.
    float* amax_out = nullptr;
    unsigned long long* counts = nullptr;  ///< kCastCounts, added into; may be null
    /// castPartialRows(rows) × cols float32: each tile row's column sums of act(in),
    /// for sumColumnPartials. May be null.
    float* column_partials = nullptr;
    ScalingState state;  ///< updated after the cast where `state.history` is set
    RowNorm norm;        ///< with Activation::LayerNorm
};

/// Whether castTransposeToFp8 can take `job` with Activation::LayerNorm: float32
/// input, rows and columns multiples of 8, 16-byte aligned, its scale given (the
/// LayerNorm's output is never written, so no pass can take its amax first).
bool castCanNormalize(const CastJob& job);

/// Rows of CastJob::column_partials a cast of `rows` rows needs at most.
int64_t castPartialRows(int64_t rows);

/// Queues `job` on `stream` (a cudaStream_t of the current device). The scaled matmul
/// takes its first operand row-major and its second column-major, so a Linear
/// layer's backward needs both layouts of its input, weight and output gradient.
/// Returns the rows of column partials written (0 where none were asked for).
int64_t castTransposeToFp8(const CastJob& job, void* stream);

/// Zeroes `*amax_out`, then takes the largest |act(in)| into it.
void amaxOf(const void* in, Element element, int64_t n, Activation activation, float* amax_out,
            void* stream);

/// For each row of the float32 `rows` × `cols` matrix `in`: mean[r] and rstd[r] =
/// 1 / sqrt(biased variance + eps), as a LayerNorm over the last dimension takes them.
void rowStatistics(const float* in, int64_t rows, int64_t cols, double eps, float* mean,
                   float* rstd, void* stream);

/// out[c] = Σ_r partials[r][c] over `partial_rows` rows, in a fixed order (the same
/// sum on every run).
void sumColumnPartials(const float* partials, int64_t partial_rows, int64_t cols, float* out,
                       void* stream);

}  // namespace ampbench::amp::cuda
