#include "core/dist/GradientSync.h"

#include <ATen/ATen.h>

namespace ampbench::dist {
namespace {

/// Consecutive tensors of one dtype and device, at most `limit` bytes each (a larger
/// tensor is a bucket of its own).
std::vector<std::vector<size_t>> bucketsOf(const std::vector<at::Tensor>& tensors, int64_t limit) {
    std::vector<std::vector<size_t>> buckets;
    int64_t bytes = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const at::Tensor& t = tensors[i];
        const int64_t size = t.numel() * static_cast<int64_t>(t.element_size());
        const bool fresh = buckets.empty() || bytes + size > limit ||
                           tensors[buckets.back().front()].scalar_type() != t.scalar_type() ||
                           tensors[buckets.back().front()].device() != t.device();
        if (fresh) {
            buckets.emplace_back();
            bytes = 0;
        }
        buckets.back().push_back(i);
        bytes += size;
    }
    return buckets;
}

at::Tensor flatten(const std::vector<at::Tensor>& tensors, const std::vector<size_t>& which,
                   const at::Tensor* extra = nullptr) {
    std::vector<at::Tensor> parts;
    parts.reserve(which.size() + 1);
    for (size_t i : which) {
        parts.push_back(tensors[i].reshape({-1}));  // logical order, whatever the layout
    }
    if (extra) {
        parts.push_back(extra->reshape({-1}).to(tensors[which.front()].scalar_type()));
    }
    return at::cat(parts);
}

void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& tensors,
               const std::vector<size_t>& which) {
    int64_t offset = 0;
    for (size_t i : which) {
        at::Tensor t = tensors[i];
        const int64_t n = t.numel();
        t.copy_(flat.slice(0, offset, offset + n).view(t.sizes()));
        offset += n;
    }
}

}  // namespace

GradientSync::GradientSync(Communicator& comm, int64_t bucket_bytes)
    : comm_(comm), bucket_bytes_(bucket_bytes) {}

void GradientSync::broadcastState(const std::vector<at::Tensor>& params,
                                  const std::vector<at::Tensor>& buffers) {
    std::vector<at::Tensor> state;
    state.reserve(params.size() + buffers.size());
    for (const auto& p : params) {
        state.push_back(p.detach());
    }
    for (const auto& b : buffers) {
        if (b.defined()) {
            state.push_back(b.detach());
        }
    }
    for (const auto& bucket : bucketsOf(state, bucket_bytes_)) {
        at::Tensor flat = flatten(state, bucket);
        comm_.broadcast(flat, "broadcast of the model from rank 0");
        ++collectives_;
        at::NoGradGuard no_grad;
        unflatten(flat, state, bucket);
    }
}

void GradientSync::averageGradients(const std::vector<at::Tensor>& params, at::Tensor* step_loss) {
    std::vector<at::Tensor> grads;
    grads.reserve(params.size());
    for (const auto& p : params) {
        if (!p.requires_grad()) {
            continue;  // frozen: no gradient on any rank, and none is made up for it
        }
        if (!p.grad().defined()) {
            auto param = p;
            param.mutable_grad() = at::zeros_like(p);
        }
        grads.push_back(p.grad());
    }
    if (grads.empty()) {
        return;
    }
    const auto buckets = bucketsOf(grads, bucket_bytes_);
    std::vector<at::Tensor> flats;
    flats.reserve(buckets.size());
    for (size_t b = 0; b < buckets.size(); ++b) {
        const bool last = b + 1 == buckets.size();
        flats.push_back(flatten(grads, buckets[b], last ? step_loss : nullptr));
    }
    comm_.allreduceSum(flats, "gradient all-reduce");
    collectives_ += static_cast<int64_t>(flats.size());
    const double inv = 1.0 / static_cast<double>(comm_.world());
    for (size_t b = 0; b < buckets.size(); ++b) {
        flats[b].mul_(inv);
        unflatten(flats[b], grads, buckets[b]);
    }
    if (step_loss) {
        const at::Tensor& last = flats.back();
        *step_loss = last.slice(0, last.numel() - 1, last.numel())
                         .reshape(step_loss->sizes())
                         .to(step_loss->scalar_type());
    }
}

void GradientSync::agreeFoundInf(at::Tensor& found_inf) {
    comm_.allreduceMax(found_inf, "found-inf agreement");
    ++collectives_;
}

}  // namespace ampbench::dist
