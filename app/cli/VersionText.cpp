#include "cli/VersionText.h"

#include "cli/ReportCommand.h"
#include "core/config/BuildInfo.h"
#include "core/probe/Environment.h"

#ifdef AMPBENCH_REPORTS_WITH_QT
#include "cli/ReportQt.h"
#endif

namespace ampbench::cli {

std::string versionText() {
    std::string t = std::string("ampbench-cli ") + config::buildVersion() + "\n";
    t += std::string("commit    ") + config::buildCommit() + "\n";
    t += std::string("build     ") + config::buildType() + "\n";
    const probe::Environment cpu = probe::probeEnvironment("cpu");
    t += "LibTorch  " + cpu.libtorch_version + "\n";
#ifdef AMPBENCH_WITH_CUDA
    if (probe::cudaAvailable()) {
        const probe::Environment gpu = probe::probeEnvironment("cuda");
        t += "CUDA      " + gpu.cuda_version + " (driver " + gpu.driver_version + ", cuDNN " +
             (gpu.cudnn_version.empty() ? std::string("none") : gpu.cudnn_version) + "), " +
             gpu.device_name + "\n";
    } else {
        t += "CUDA      built in; no CUDA device visible\n";
    }
#else
    t += "CUDA      none (LibTorch for CPU only)\n";
#endif
#ifdef AMPBENCH_REPORTS_WITH_QT
    t += "Qt        " + qtRuntimeVersion() + "\n";
#else
    t += "Qt        none\n";
#endif
    t += "reports   " + reportFormats();
    return t;
}

}  // namespace ampbench::cli
