#pragma once
// c10d's process group behind one small interface: the store (FileStore or
// TCPStore), the backend (Gloo on CPU, NCCL on CUDA, each where this build has it)
// and the few collectives data-parallel training needs. c10d stays in the source.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel/Machine.h"
#include "core/parallel/RankSetup.h"

namespace ampbench::parallel {

/// A collective or the rendezvous failed: another rank died, failed or did not
/// answer within the timeout. The message names what was being done and, where a
/// rank said why it stopped, that rank and its reason.
class RankError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Whether this build can run ranks on the CPU (Gloo) and on CUDA (NCCL).
bool glooAvailable();
bool ncclAvailable();

/// The device rank `setup.rank` trains on: its own GPU (cuda:first_gpu + rank, made
/// the current device) when `device` is CUDA; the CPU stays the CPU.
c10::Device rankDevice(c10::Device device, const RankSetup& setup);

class Communicator {
  public:
    /// Joins the run's rendezvous and builds the backend for `device` (Gloo for the
    /// CPU, NCCL for CUDA). Blocks until every rank has joined or the timeout passes
    /// (RankError naming the ranks that never came).
    Communicator(const RankSetup& setup, bool cuda);
    ~Communicator();
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    int rank() const { return setup_.rank; }
    int world() const { return setup_.world; }
    const char* backend() const;  ///< "gloo" or "nccl"

    /// Sums each tensor over the ranks in place (all launched, then all awaited).
    void allreduceSum(std::vector<at::Tensor>& tensors, const char* what);
    /// The element-wise maximum over the ranks, in place.
    void allreduceMax(at::Tensor& tensor, const char* what);
    /// Rank 0's values into every rank's tensor, in place.
    void broadcast(at::Tensor& tensor, const char* what);

    /// Small messages between ranks through the store: a summary, a failure.
    void publish(const std::string& key, const std::string& value);
    /// Waits for `key` up to `wait_s` seconds (at most the timeout); nullopt when it
    /// never came.
    std::optional<std::string> fetch(const std::string& key, double wait_s);
    /// Nullopt at once when nobody published `key` yet.
    std::optional<std::string> peek(const std::string& key);
    /// Tells the other ranks why this one stops (best effort, never throws).
    void announceFailure(const std::string& reason) noexcept;
    /// "rank 1: out of memory: ..." for the first other rank that announced a
    /// failure; empty when none did.
    std::string failureOfOthers() noexcept;

  private:
    struct Impl;
    [[noreturn]] void fail(const char* what, const std::exception& e);
    /// Says this rank has joined; rank 0 of a launched run waits for the others,
    /// failing at once when one of them ended before joining.
    void awaitOthers();
    RankSetup setup_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::parallel
