#include "core/parallel/GradientSync.h"

#include <ATen/ATen.h>

namespace ampbench::parallel {
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
                   const std::vector<at::Tensor>& extras = {}) {
    std::vector<at::Tensor> parts;
    parts.reserve(which.size() + extras.size());
    for (size_t i : which) {
        parts.push_back(tensors[i].reshape({-1}));  // logical order, whatever the layout
    }
    for (const auto& extra : extras) {
        parts.push_back(extra.reshape({-1}).to(tensors[which.front()].scalar_type()));
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
    std::vector<at::Tensor> grads, owners;
    std::vector<int64_t> made_up;  // indices into grads of the zeros made up here
    grads.reserve(params.size());
    for (const auto& p : params) {
        if (!p.requires_grad()) {
            continue;  // frozen: no gradient on any rank, and none is made up for it
        }
        if (!p.grad().defined()) {
            auto param = p;
            param.mutable_grad() = at::zeros_like(p);
            made_up.push_back(static_cast<int64_t>(grads.size()));
        }
        grads.push_back(p.grad());
        owners.push_back(p);
    }
    if (grads.empty()) {
        return;
    }
    // Which ranks had each gradient: one that none had stays unset, as on one rank
    // (the optimizer then leaves its parameter alone). Summed with the gradients.
    at::Tensor had =
        at::ones({static_cast<int64_t>(grads.size())}, grads.back().options().dtype(at::kFloat));
    if (!made_up.empty()) {
        had.index_fill_(0, at::tensor(made_up, at::kLong).to(had.device()), 0.0);
    }
    const auto buckets = bucketsOf(grads, bucket_bytes_);
    std::vector<at::Tensor> flats;
    flats.reserve(buckets.size());
    for (size_t b = 0; b < buckets.size(); ++b) {
        std::vector<at::Tensor> extras;
        if (b + 1 == buckets.size()) {
            extras.push_back(had);
            if (step_loss) {
                extras.push_back(*step_loss);
            }
        }
        flats.push_back(flatten(grads, buckets[b], extras));
    }
    comm_.allreduceSum(flats, "gradient all-reduce");
    collectives_ += static_cast<int64_t>(flats.size());
    const double inv = 1.0 / static_cast<double>(comm_.world());
    for (size_t b = 0; b < buckets.size(); ++b) {
        flats[b].mul_(inv);
        unflatten(flats[b], grads, buckets[b]);
    }
    const at::Tensor& last = flats.back();
    const int64_t tail = static_cast<int64_t>(grads.size()) + (step_loss ? 1 : 0);
    if (step_loss) {
        *step_loss = last.slice(0, last.numel() - 1, last.numel())
                         .reshape(step_loss->sizes())
                         .to(step_loss->scalar_type());
    }
    if (!made_up.empty()) {  // a host read only where this rank made zeros up
        const at::Tensor counts =
            last.slice(0, last.numel() - tail,
                       last.numel() - tail + static_cast<int64_t>(grads.size()))
                .to(at::kCPU, at::kFloat);
        for (int64_t i : made_up) {
            if (counts[i].item<float>() == 0.0f) {
                owners[static_cast<size_t>(i)].mutable_grad().reset();
            }
        }
    }
}

void GradientSync::agreeFoundInf(at::Tensor& found_inf) {
    comm_.allreduceMax(found_inf, "found-inf agreement");
    ++collectives_;
}

}  // namespace ampbench::parallel
