#include "core/autocast/AutocastGuard.h"

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#define AMPBENCH_TORCH_2X (TORCH_VERSION_MAJOR >= 2)

namespace ampbench::autocast {
namespace {

void setEnabled(c10::DeviceType device, bool on) {
#if AMPBENCH_TORCH_2X
    at::autocast::set_autocast_enabled(device, on);
#else
    if (device == c10::DeviceType::CUDA) {
        at::autocast::set_enabled(on);
    } else {
        at::autocast::set_cpu_enabled(on);
    }
#endif
}

void setDtype(c10::DeviceType device, c10::ScalarType dtype) {
#if AMPBENCH_TORCH_2X
    at::autocast::set_autocast_dtype(device, dtype);
#else
    if (device == c10::DeviceType::CUDA) {
        at::autocast::set_autocast_gpu_dtype(dtype);
    } else {
        at::autocast::set_autocast_cpu_dtype(dtype);
    }
#endif
}

}  // namespace

bool AutocastGuard::isEnabled(c10::DeviceType device) {
#if AMPBENCH_TORCH_2X
    return at::autocast::is_autocast_enabled(device);
#else
    return device == c10::DeviceType::CUDA ? at::autocast::is_enabled()
                                           : at::autocast::is_cpu_enabled();
#endif
}

c10::ScalarType AutocastGuard::dtype(c10::DeviceType device) {
#if AMPBENCH_TORCH_2X
    return at::autocast::get_autocast_dtype(device);
#else
    return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                           : at::autocast::get_autocast_cpu_dtype();
#endif
}

bool AutocastGuard::cacheEnabled() {
    return at::autocast::is_autocast_cache_enabled();
}

AutocastGuard::AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled,
                             bool cache)
    : device_(device),
      prev_enabled_(isEnabled(device)),
      prev_dtype_(AutocastGuard::dtype(device)),
      prev_cache_(cacheEnabled()) {
    TORCH_CHECK(device == c10::DeviceType::CPU || device == c10::DeviceType::CUDA,
                "autocast: only CPU and CUDA are supported, got ", device);
    TORCH_CHECK(!enabled || autocastSupported(device, dtype), "autocast to ", dtype, " on ", device,
                " is not supported by LibTorch ", TORCH_VERSION);
    setEnabled(device, enabled);
    setDtype(device, dtype);
    at::autocast::set_autocast_cache_enabled(cache);
    at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
    if (at::autocast::decrement_nesting() == 0) {
        at::autocast::clear_cache();
    }
    setEnabled(device_, prev_enabled_);
    setDtype(device_, prev_dtype_);
    at::autocast::set_autocast_cache_enabled(prev_cache_);
}

bool autocastSupported(c10::DeviceType device, c10::ScalarType dtype) {
    if (dtype != c10::ScalarType::Half && dtype != c10::ScalarType::BFloat16) {
        return false;
    }
    if (device == c10::DeviceType::CUDA) {
        return true;
    }
#if AMPBENCH_TORCH_2X
    return device == c10::DeviceType::CPU;
#else
    return device == c10::DeviceType::CPU && dtype == c10::ScalarType::BFloat16;
#endif
}

}  // namespace ampbench::autocast
