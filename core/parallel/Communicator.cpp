#include "core/parallel/Communicator.h"

#include <c10/util/Exception.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif
#ifdef AMPBENCH_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef AMPBENCH_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ampbench::parallel {
namespace {

// LibTorch 2 split the process group into a front and per-device backends; the
// backends (ProcessGroupGloo, ProcessGroupNCCL) keep the collectives we call.
#if TORCH_VERSION_MAJOR >= 2
using Group = c10d::Backend;
#else
using Group = c10d::ProcessGroup;
#endif

const char* kFailedPrefix = "ampbench/failed/";
const char* kJoinedPrefix = "ampbench/joined/";

std::string shortText(const std::exception& e) {
    if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
        return c10->what_without_backtrace();
    }
    return e.what();
}

std::string text(const std::vector<uint8_t>& bytes) {
    return std::string(bytes.begin(), bytes.end());
}

}  // namespace

bool glooAvailable() {
#ifdef AMPBENCH_WITH_GLOO
    return true;
#else
    return false;
#endif
}

bool ncclAvailable() {
#ifdef AMPBENCH_WITH_NCCL
    return true;
#else
    return false;
#endif
}

config::RankCapacity rankCapacity(bool cuda) {
    config::RankCapacity c;
    c.cuda = cuda;
#ifdef AMPBENCH_WITH_CUDA
    c.gpus = cuda ? static_cast<int>(c10::cuda::device_count()) : 0;
#endif
    c.gloo = glooAvailable();
    c.nccl = ncclAvailable();
    return c;
}

c10::Device rankDevice(c10::Device device, const RankSetup& setup) {
    if (!device.is_cuda()) {
        return device;
    }
    const auto index = static_cast<c10::DeviceIndex>(setup.first_gpu + setup.rank);
#ifdef AMPBENCH_WITH_CUDA
    c10::cuda::set_device(index);  // NCCL and the caching allocator follow the current device
#endif
    return c10::Device(c10::kCUDA, index);
}

struct Communicator::Impl {
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<Group> group;
    std::chrono::milliseconds timeout{0};
    bool nccl = false;
};

Communicator::Communicator(const RankSetup& setup, bool cuda)
    : setup_(setup), impl_(std::make_unique<Impl>()) {
    impl_->timeout = std::chrono::milliseconds(static_cast<int64_t>(setup.timeout_s * 1000));
    if (!setup.launch_error.empty()) {
        throw RankError(setup.launch_error);
    }
    try {
        if (!setup.tcp_host.empty()) {
            c10d::TCPStoreOptions opts;
            opts.port = static_cast<uint16_t>(setup.tcp_port);
            opts.isServer = setup.rank == 0;
            opts.numWorkers = setup.world;
            opts.timeout = impl_->timeout;
            impl_->store = c10::make_intrusive<c10d::TCPStore>(setup.tcp_host, opts);
        } else {
            impl_->store = c10::make_intrusive<c10d::FileStore>(setup.store_path, setup.world);
        }
        impl_->store->setTimeout(impl_->timeout);
    } catch (const std::exception& e) {
        throw RankError("data-parallel rendezvous of rank " + std::to_string(setup.rank) +
                        " failed: " + shortText(e));
    }
    awaitOthers();
    try {
        if (cuda) {
#ifdef AMPBENCH_WITH_NCCL
            // A collective that outlives the timeout throws from wait() instead of
            // leaving the watchdog to end the process: the run is recorded as failed.
            ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
            auto opts = c10d::ProcessGroupNCCL::Options::create();
            opts->timeout = impl_->timeout;
            impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, setup.rank,
                                                                       setup.world, opts);
            impl_->nccl = true;
#else
            throw RankError("data-parallel ranks on CUDA need NCCL, which this build lacks");
#endif
        } else {
#ifdef AMPBENCH_WITH_GLOO
            auto opts = c10d::ProcessGroupGloo::Options::create(impl_->timeout);
            opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
            impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, setup.rank,
                                                                       setup.world, opts);
#else
            throw RankError(
                "data-parallel ranks on the CPU need Gloo, which this build lacks (build with "
                "libgloo-dev installed)");
#endif
        }
    } catch (const RankError&) {
        throw;
    } catch (const std::exception& e) {
        const std::string lost = setup.explain_lost_rank ? setup.explain_lost_rank() : "";
        throw RankError("data-parallel rank " + std::to_string(setup.rank) + " of " +
                        std::to_string(setup.world) + " could not join the others within " +
                        std::to_string(static_cast<int>(setup.timeout_s)) +
                        " s: " + (lost.empty() ? shortText(e) : lost));
    }
}

Communicator::~Communicator() {
#if defined(AMPBENCH_WITH_NCCL) && TORCH_VERSION_MAJOR >= 2
    if (impl_ && impl_->nccl && impl_->group) {
        try {
            static_cast<c10d::ProcessGroupNCCL*>(impl_->group.get())->shutdown();
        } catch (...) {
        }
    }
#endif
}

void Communicator::awaitOthers() {
    publish(kJoinedPrefix + std::to_string(setup_.rank), "1");
    if (!setup_.explain_lost_rank) {
        return;  // the backend's rendezvous waits for the others, up to the timeout
    }
    // Rank 0 of a launched run: a rank that ends before it joins (a bad database, a
    // program that does not start) fails the run now, not after the timeout.
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(setup_.timeout_s * 1000));
    for (int r = 1; r < setup_.world; ++r) {
        while (!peek(kJoinedPrefix + std::to_string(r)) &&
               std::chrono::steady_clock::now() < until) {
            if (const std::string lost = setup_.explain_lost_rank(); !lost.empty()) {
                throw RankError("data-parallel rank " + std::to_string(r) +
                                " never joined: " + lost);
            }
        }
    }
}

const char* Communicator::backend() const {
    return impl_->nccl ? "nccl" : "gloo";
}

void Communicator::fail(const char* what, const std::exception& e) {
    std::string message = "data-parallel " + std::string(what) + " failed on rank " +
                          std::to_string(setup_.rank) + ": ";
    std::string others = failureOfOthers();
    if (others.empty() && setup_.explain_lost_rank) {
        others = setup_.explain_lost_rank();
    }
    message +=
        others.empty() ? "another rank died or did not answer (" + shortText(e) + ")" : others;
    throw RankError(message);
}

void Communicator::allreduceSum(std::vector<at::Tensor>& tensors, const char* what) {
    try {
        std::vector<c10::intrusive_ptr<c10d::Work>> works;
        works.reserve(tensors.size());
        for (auto& t : tensors) {
            std::vector<at::Tensor> one{t};
            c10d::AllreduceOptions opts;
            opts.reduceOp = c10d::ReduceOp::SUM;
            works.push_back(impl_->group->allreduce(one, opts));
        }
        for (auto& w : works) {
            w->wait(impl_->timeout);
        }
    } catch (const std::exception& e) {
        fail(what, e);
    }
}

void Communicator::allreduceMax(at::Tensor& tensor, const char* what) {
    try {
        std::vector<at::Tensor> one{tensor};
        c10d::AllreduceOptions opts;
        opts.reduceOp = c10d::ReduceOp::MAX;
        impl_->group->allreduce(one, opts)->wait(impl_->timeout);
    } catch (const std::exception& e) {
        fail(what, e);
    }
}

void Communicator::broadcast(at::Tensor& tensor, const char* what) {
    try {
        std::vector<at::Tensor> one{tensor};
        c10d::BroadcastOptions opts;
        opts.rootRank = 0;
        impl_->group->broadcast(one, opts)->wait(impl_->timeout);
    } catch (const std::exception& e) {
        fail(what, e);
    }
}

void Communicator::publish(const std::string& key, const std::string& value) {
    impl_->store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::optional<std::string> Communicator::fetch(const std::string& key, double wait_s) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration<double>(std::min(wait_s, setup_.timeout_s));
    while (true) {
        if (auto value = peek(key)) {
            return value;
        }
        if (std::chrono::steady_clock::now() >= until) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::optional<std::string> Communicator::peek(const std::string& key) {
    try {
        if (impl_->store->check({key})) {
            return text(impl_->store->get(key));
        }
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

void Communicator::announceFailure(const std::string& reason) noexcept {
    try {
        publish(kFailedPrefix + std::to_string(setup_.rank), reason);
    } catch (...) {
    }
}

std::string Communicator::failureOfOthers() noexcept {
    for (int r = 0; r < setup_.world; ++r) {
        if (r == setup_.rank) {
            continue;
        }
        if (auto why = peek(kFailedPrefix + std::to_string(r))) {
            return "rank " + std::to_string(r) + " failed: " + *why;
        }
    }
    return {};
}

}  // namespace ampbench::parallel
