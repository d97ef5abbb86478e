#include "core/analysis/Summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/analysis/Gains.h"
#include "core/analysis/Statistics.h"
#include "core/run/FusedGroup.h"
#include "core/store/Database.h"

namespace ampbench::analysis {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

bool entersFigures(run::RunStatus status, int64_t steps) {
    return status == run::RunStatus::Finished && steps > 0;
}

RunSummary summarizeRun(const store::RunRow& run, const std::vector<run::StepRecord>& steps,
                        const std::vector<run::EvalRecord>& evals, int fused_group) {
    const int64_t group = std::max(1, fused_group);
    RunSummary s;
    s.run_id = run.id;
    s.arm = run.arm;
    s.seed = run.seed;
    s.status = run.status;
    s.steps = static_cast<int64_t>(steps.size());
    s.final_val_accuracy = evals.empty() ? kNaN : evals.back().val_accuracy;
    s.final_val_loss = evals.empty() ? kNaN : evals.back().val_loss;
    s.min_loss_scale = kNaN;
    std::vector<double> ms, ms_per_sample;
    double timed_ms = 0, timed_wait = 0;
    int64_t timed_samples = 0, prev_samples = 0;
    for (const auto& st : steps) {
        const int64_t in_step = (st.samples - prev_samples) * group;
        prev_samples = st.samples;
        s.peak_mem = std::max(s.peak_mem, st.mem_peak / group);  // a member's share
        s.skipped += st.skipped ? 1 : 0;
        if (std::isnan(s.min_loss_scale) || st.loss_scale < s.min_loss_scale) {
            s.min_loss_scale = st.loss_scale;
        }
        if (st.timed && st.step_ms > 0) {
            ms.push_back(st.step_ms);
            if (in_step > 0) {
                ms_per_sample.push_back(st.step_ms / static_cast<double>(in_step));
            }
            timed_ms += st.step_ms;
            timed_wait += st.data_wait_ms;
            timed_samples += in_step;
        }
    }
    if (!steps.empty()) {
        s.samples = steps.back().samples;
        s.wall_s = steps.back().wall_s;
        size_t tail = std::max<size_t>(1, steps.size() / 10);
        std::vector<double> last;
        for (size_t i = steps.size() - tail; i < steps.size(); ++i) {
            last.push_back(steps[i].loss);
        }
        s.final_train_loss = mean(last);
    }
    s.timed_steps = static_cast<int64_t>(ms.size());
    s.median_step_ms = median(ms);
    s.p10_step_ms = quantile(ms, 0.1);
    s.p90_step_ms = quantile(ms, 0.9);
    s.median_ms_per_sample = median(ms_per_sample);
    s.samples_per_s =
        timed_ms > 0 ? static_cast<double>(timed_samples) / (timed_ms / 1000.0) : kNaN;
    s.data_wait_share = timed_ms > 0 ? timed_wait / timed_ms : kNaN;
    return s;
}

std::vector<ArmSummary> summarizeArms(const std::vector<RunSummary>& runs,
                                      const std::string& baseline) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<const RunSummary*>> by_arm;
    for (const auto& r : runs) {
        if (!by_arm.count(r.arm)) {
            order.push_back(r.arm);
        }
        by_arm[r.arm].push_back(&r);
    }
    std::vector<ArmSummary> out;
    for (const auto& name : order) {
        ArmSummary a;
        a.arm = name;
        std::vector<double> med, p10, p90, sps, acc, wait, per_sample;
        for (const auto* r : by_arm[name]) {
            ++a.runs;
            if (!entersFigures(r->status, r->steps)) {
                continue;
            }
            ++a.finished;
            if (r->timed_steps > 0) {
                med.push_back(r->median_step_ms);
                p10.push_back(r->p10_step_ms);
                p90.push_back(r->p90_step_ms);
                sps.push_back(r->samples_per_s);
                per_sample.push_back(r->median_ms_per_sample);
                wait.push_back(r->data_wait_share);
            }
            if (std::isfinite(r->final_val_accuracy)) {
                acc.push_back(r->final_val_accuracy);
            }
            a.peak_mem = std::max(a.peak_mem, r->peak_mem);
            a.skipped += r->skipped;
        }
        a.median_step_ms = median(med);
        a.p10_step_ms = median(p10);
        a.p90_step_ms = median(p90);
        a.samples_per_s = mean(sps);
        a.ms_per_sample = mean(per_sample);
        a.run_ms_per_sample = per_sample;
        a.val_accuracy = mean(acc);
        a.val_accuracy_sd = stddev(acc);
        a.data_wait_share = mean(wait);
        out.push_back(a);
    }
    const ArmSummary* base = nullptr;
    for (const auto& a : out) {
        if (a.arm == baseline) {
            base = &a;
        }
    }
    if (!base && !out.empty()) {
        base = &out.front();
    }
    for (auto& a : out) {
        a.speedup = base ? speedupOf(base->run_ms_per_sample, a.run_ms_per_sample) : kNaN;
        a.memory_ratio = base && base->peak_mem > 0 && a.peak_mem > 0
                             ? static_cast<double>(a.peak_mem) / static_cast<double>(base->peak_mem)
                             : kNaN;
    }
    return out;
}

std::vector<RunSummary> summarizeExperimentRuns(const store::Database& db, int64_t experiment_id) {
    std::vector<RunSummary> out;
    for (const auto& run : db.runs(experiment_id)) {
        out.push_back(summarizeRun(run, db.steps(run.id), db.evals(run.id),
                                   run::fusedGroupSize(db.events(run.id))));
    }
    return out;
}

}  // namespace ampbench::analysis
