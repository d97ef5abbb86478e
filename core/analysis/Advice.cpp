#include "core/analysis/Advice.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/config/Advice.h"
#include "core/config/PlannedArm.h"

namespace ampbench::analysis {
namespace {

bool known(double v) {
    return std::isfinite(v);
}

/// Ruled out by its quality check, and why; None when it stands.
RuleOut qualityRuling(const CandidateFigures& f, const AdviceThresholds& t) {
    if (f.verdict == Verdict::Diverged) {
        return RuleOut::Diverged;
    }
    if (f.steps > 0 &&
        static_cast<double>(f.late_skipped) > t.skip_share * static_cast<double>(f.steps)) {
        return RuleOut::SkippedSteps;
    }
    // Beyond the band rules out even where the final metric agrees (the verdict's "aligned,
    // curve offset"): the advice recommends what trains as fp32 does, not only ends alike.
    if (f.noise_known && known(f.band_units) && f.band_units > t.band) {
        return RuleOut::LeftBand;
    }
    return RuleOut::None;
}

/// Within a tie on samples/s, which row goes first: less memory, a smaller effective
/// batch (the learning rate moved less), then the name.
bool betterInTie(const AdviceRow& a, const AdviceRow& b) {
    if (a.f.peak_bytes > 0 && b.f.peak_bytes > 0 && a.f.peak_bytes != b.f.peak_bytes) {
        return a.f.peak_bytes < b.f.peak_bytes;
    }
    if (a.f.effective_batch != b.f.effective_batch) {
        return a.f.effective_batch < b.f.effective_batch;
    }
    return a.f.arm < b.f.arm;
}

bool ties(const AdviceRow& a, const AdviceRow& b, double tie) {
    const double hi = std::max(a.f.samples_per_s, b.f.samples_per_s);
    return hi > 0 && std::abs(a.f.samples_per_s - b.f.samples_per_s) <= tie * hi;
}

int order(RowStatus s) {
    switch (s) {
        case RowStatus::Ranked:
            return 0;
        case RowStatus::RuledOut:
            return 1;
        case RowStatus::NotMeasured:
            return 2;
        case RowStatus::Unsupported:
            return 3;
    }
    return 4;
}

/// Whether a ranked, checked row may be recommended: it kept the baseline's curve and
/// gains speed, or memory at no loss of speed.
bool recommendable(const AdviceRow& r, const AdviceThresholds& t) {
    const bool aligned = r.f.verdict == Verdict::Aligned || r.f.verdict == Verdict::WithinNoise;
    const bool faster = known(r.speed_ratio) && r.speed_ratio >= t.gain;
    const bool leaner = known(r.memory_ratio) && r.memory_ratio <= t.memory_gain &&
                        known(r.speed_ratio) && r.speed_ratio >= t.no_loss;
    return r.status == RowStatus::Ranked && r.f.checked && aligned && (faster || leaner);
}

}  // namespace

const AdviceRow* Advice::baselineRow() const {
    for (const auto& r : rows) {
        if (r.f.arm == baseline) {
            return &r;
        }
    }
    return nullptr;
}

Advice rankCandidates(const std::vector<CandidateFigures>& figures, const std::string& baseline,
                      int64_t user_batch, const AdviceThresholds& t) {
    Advice a;
    a.baseline = baseline;
    a.user_batch = user_batch;
    const CandidateFigures* base = nullptr;
    for (const auto& f : figures) {
        if (f.arm == baseline) {
            base = &f;
        }
    }
    for (const auto& f : figures) {
        AdviceRow r;
        r.f = f;
        if (!f.unsupported.empty()) {
            r.status = RowStatus::Unsupported;
        } else if (!f.measured) {
            r.status = f.failure.empty() ? RowStatus::NotMeasured : RowStatus::RuledOut;
            r.why = f.failure.empty() ? RuleOut::None : RuleOut::PassFailed;
        } else {
            r.why = f.checked && f.arm != baseline ? qualityRuling(f, t) : RuleOut::None;
            r.status = r.why == RuleOut::None ? RowStatus::Ranked : RowStatus::RuledOut;
        }
        if (base && base->measured && f.measured) {
            if (base->samples_per_s > 0 && known(f.samples_per_s)) {
                r.speed_ratio = f.samples_per_s / base->samples_per_s;
            }
            if (base->peak_bytes > 0 && f.peak_bytes > 0) {
                r.memory_ratio =
                    static_cast<double>(f.peak_bytes) / static_cast<double>(base->peak_bytes);
            }
        }
        if (f.samples_per_s > 0 && user_batch > 0) {
            r.user_step_ms = 1000.0 * static_cast<double>(user_batch) / f.samples_per_s;
        }
        a.quality_checked = a.quality_checked || (f.checked && f.arm != baseline);
        a.rows.push_back(r);
    }
    // By status, then samples/s; then, within a tie, the better by memory and batch
    // (moved up past the rows it ties with, as insertion sort moves it).
    std::stable_sort(a.rows.begin(), a.rows.end(), [](const AdviceRow& x, const AdviceRow& y) {
        if (order(x.status) != order(y.status)) {
            return order(x.status) < order(y.status);
        }
        const double xs = known(x.f.samples_per_s) ? x.f.samples_per_s : -1;
        const double ys = known(y.f.samples_per_s) ? y.f.samples_per_s : -1;
        return xs > ys;
    });
    for (size_t i = 1; i < a.rows.size(); ++i) {
        for (size_t j = i; j > 0; --j) {
            AdviceRow& prev = a.rows[j - 1];
            AdviceRow& cur = a.rows[j];
            if (prev.status != RowStatus::Ranked || cur.status != RowStatus::Ranked ||
                !ties(prev, cur, t.tie) || !betterInTie(cur, prev)) {
                break;
            }
            std::swap(prev, cur);
        }
    }
    int rank = 0;
    for (auto& r : a.rows) {
        r.rank = r.status == RowStatus::Ranked ? ++rank : 0;
    }
    const bool any_measured =
        std::any_of(a.rows.begin(), a.rows.end(), [](const AdviceRow& r) { return r.f.measured; });
    if (!any_measured) {
        return a;
    }
    for (size_t i = 0; i < a.rows.size(); ++i) {
        if (a.rows[i].f.arm != baseline && recommendable(a.rows[i], t)) {
            a.recommended = static_cast<int>(i);
            a.kind = Recommendation::Candidate;
            return a;
        }
    }
    if (!a.quality_checked) {
        for (size_t i = 0; i < a.rows.size(); ++i) {
            const AdviceRow& r = a.rows[i];
            if (r.status == RowStatus::Ranked && r.f.arm != baseline && known(r.speed_ratio) &&
                r.speed_ratio >= t.gain) {
                a.recommended = static_cast<int>(i);
                a.kind = Recommendation::Unchecked;
                return a;
            }
        }
    }
    for (size_t i = 0; i < a.rows.size(); ++i) {
        if (a.rows[i].f.arm == baseline && a.rows[i].f.measured) {
            a.recommended = static_cast<int>(i);
            a.kind = Recommendation::KeepBaseline;
            return a;
        }
    }
    return a;
}

std::vector<int> paretoFront(const Advice& a) {
    std::vector<int> front;
    const auto usable = [](const AdviceRow& r) {
        return r.status == RowStatus::Ranked && r.f.samples_per_s > 0 && r.f.peak_bytes > 0;
    };
    for (size_t i = 0; i < a.rows.size(); ++i) {
        const AdviceRow& r = a.rows[i];
        if (!usable(r)) {
            continue;
        }
        const bool beaten = std::any_of(a.rows.begin(), a.rows.end(), [&](const AdviceRow& o) {
            return &o != &r && usable(o) && o.f.samples_per_s >= r.f.samples_per_s &&
                   o.f.peak_bytes <= r.f.peak_bytes &&
                   (o.f.samples_per_s > r.f.samples_per_s || o.f.peak_bytes < r.f.peak_bytes);
        });
        if (!beaten) {
            front.push_back(static_cast<int>(i));
        }
    }
    std::sort(front.begin(), front.end(), [&](int x, int y) {
        return a.rows[static_cast<size_t>(x)].f.peak_bytes <
               a.rows[static_cast<size_t>(y)].f.peak_bytes;
    });
    return front;
}

bool isAdvice(const ExperimentData& data) {
    return std::any_of(data.runs.begin(), data.runs.end(),
                       [](const RunData& r) { return timingPass(r.row); });
}

namespace {

/// The pass's waiting for data against its step time, over its timed steps.
double dataShare(const RunData& pass) {
    double wait = 0, step = 0;
    for (const auto& s : pass.steps) {
        if (s.timed && s.step_ms > 0) {
            wait += s.data_wait_ms;
            step += s.step_ms;
        }
    }
    return step > 0 ? wait / step : kUnknown;
}

/// Figures of one arm from its pass run.
void readPass(CandidateFigures& f, const RunData& pass) {
    if (pass.row.status == run::RunStatus::Finished) {
        f.measured = !msPerSample(pass).empty();
        f.data_share = dataShare(pass);
        std::vector<int64_t> per_step;
        int64_t prev = 0;
        for (const auto& s : pass.steps) {
            per_step.push_back(s.samples - prev);
            prev = s.samples;
        }
        f.failure = config::batchRefused(std::move(per_step), f.effective_batch);
        f.measured = f.measured && f.failure.empty();
        return;
    }
    if (pass.row.status != run::RunStatus::Failed) {
        return;  // cancelled or interrupted: not measured
    }
    if (pass.row.failure == run::FailureKind::Setup && pass.steps.empty()) {
        // "arm 'amp-fp16': fp16 autocast is not supported ...": the reason without the arm
        const std::string prefix = "arm '" + pass.row.arm + "': ";
        f.unsupported = pass.row.error.rfind(prefix, 0) == 0 ? pass.row.error.substr(prefix.size())
                                                             : pass.row.error;
    } else {
        f.failure = pass.row.error;
    }
}

}  // namespace

std::vector<CandidateFigures> adviceFigures(const ExperimentData& data,
                                            const ExperimentAnalysis& analysis) {
    std::vector<CandidateFigures> out;
    std::map<std::string, const store::BatchSearchRow*> searches;  // the newest per name
    for (const auto& s : data.batch_searches) {
        if (s.max_batch > 0 || !searches.count(s.arm)) {
            searches[s.arm] = &s;
        }
    }
    for (const auto& v : analysis.verdicts) {
        CandidateFigures f;
        f.arm = v.arm;
        f.arm_index = static_cast<int>(
            std::find(analysis.arm_order.begin(), analysis.arm_order.end(), v.arm) -
            analysis.arm_order.begin());
        const RunData* pass = nullptr;
        const RunData* any = nullptr;
        for (const auto& r : data.runs) {
            if (r.row.arm == v.arm) {
                any = any ? any : &r;
                if (timingPass(r.row)) {
                    pass = &r;
                }
            }
        }
        if (!any) {
            continue;  // an arm of the spec that never got a run
        }
        const config::PlannedArm planned = config::plannedArmFromJson(any->row.spec_json);
        f.format = config::formatOf(planned.arm);
        f.precision = planned.resolvedOn(analysis.device);
        f.micro_batch =
            data.spec_ok ? config::microBatchOf(data.spec, planned.arm) : planned.arm.micro_batch;
        f.accumulation = planned.arm.accumulation;
        f.checkpointing = planned.arm.checkpointing;
        f.effective_batch = planned.effective_batch;
        f.lr = planned.lr;
        f.lr_rule = planned.arm.lr_rule;
        if (pass) {
            readPass(f, *pass);
        }
        if (f.measured) {
            // The pass's median time per sample, as speed-up is measured everywhere
            // (speedupOf): a step the machine held up elsewhere moves no ranking.
            const Gains g = computeGains({pass}, {pass});
            f.samples_per_s = g.ms_per_sample > 0 ? 1000.0 / g.ms_per_sample : kUnknown;
            f.peak_bytes = g.peak_mem;
        }
        if (auto it = searches.find(config::searchName(f.format, f.checkpointing));
            it != searches.end()) {
            f.max_batch = it->second->max_batch;
            f.max_batch_at_bound = it->second->note.find("upper bound") != std::string::npos;
        }
        f.checked = std::any_of(data.runs.begin(), data.runs.end(), [&](const RunData& r) {
            return r.row.arm == v.arm && !timingPass(r.row) && !isIncomplete(r.row.status);
        });
        if (f.checked) {
            f.verdict = v.verdict;
            f.noise_known = v.noise_known;
            f.band_units = v.curve.tail_mean_abs;
            f.skipped = v.health.skipped;
            f.late_skipped = v.health.skipped - v.health.early_skipped;
            f.steps = v.health.steps;
            f.summary = v.summary;
        }
        out.push_back(f);
    }
    return out;
}

Advice readAdvice(const ExperimentData& data, const ExperimentAnalysis& analysis) {
    Advice a = rankCandidates(adviceFigures(data, analysis), analysis.baseline,
                              data.spec_ok ? data.spec.micro_batch : 0);
    a.experiment_id = data.experiment.id;
    a.device = analysis.device;
    a.memory_label = analysis.memory_label;
    if (data.spec_ok) {
        for (const auto& f : config::adviceFormats(data.spec, {})) {
            if (f.not_for_model) {
                a.not_for_model.push_back(f.name + ": " + f.unsupported);
            }
        }
    }
    return a;
}

}  // namespace ampbench::analysis
