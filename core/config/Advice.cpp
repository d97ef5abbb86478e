#include "core/config/Advice.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/config/Validation.h"

namespace ampbench::config {
namespace {

AdviceFormat format(const ExperimentSpec& spec, const std::string& name, Precision precision,
                    bool tf32, const std::string& device_reason) {
    AdviceFormat f;
    f.name = name;
    f.arm.name = name;
    f.arm.precision = precision;
    f.arm.tf32 = tf32;
    if (std::string why = armProblem(spec, f.arm); !why.empty()) {
        f.unsupported = std::move(why);
        f.not_for_model = true;
    } else {
        f.unsupported = device_reason;
    }
    return f;
}

const FormatCapacity* capacityOf(const std::vector<FormatCapacity>& capacities,
                                 const std::string& format, bool checkpointing) {
    for (const auto& c : capacities) {
        if (c.format == format && c.checkpointing == checkpointing) {
            return &c;
        }
    }
    return nullptr;
}

int64_t ceilDiv(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

std::string toString(CandidateRole role) {
    switch (role) {
        case CandidateRole::Baseline:
            return "baseline";
        case CandidateRole::UserBatch:
            return "your batch";
        case CandidateRole::LargestBatch:
            return "largest batch";
        case CandidateRole::Checkpointing:
            return "checkpointing";
        case CandidateRole::Accumulation:
            return "accumulation";
        case CandidateRole::Unsupported:
            return "unsupported";
    }
    return "?";
}

std::string formatOf(const ArmSpec& arm) {
    if (arm.precision == Precision::Fp32 && arm.tf32) {
        return "tf32";
    }
    return toString(arm.precision);
}

std::string searchName(const std::string& format, bool checkpointing) {
    return checkpointing ? format + "-ckpt" : format;
}

std::string armProblem(const ExperimentSpec& spec, const ArmSpec& arm) {
    ExperimentSpec one = spec;
    one.arms = {arm};
    for (const auto& e : validate(one)) {
        if (e.field.rfind("arms[0].", 0) == 0) {
            return e.message;
        }
    }
    return {};
}

std::vector<AdviceFormat> adviceFormats(const ExperimentSpec& spec, const AdviceDevice& device) {
    std::vector<AdviceFormat> out;
    out.push_back(format(spec, "fp32", Precision::Fp32, false, {}));
    if (device.cuda && device.tf32) {
        out.push_back(format(spec, "tf32", Precision::Fp32, true, {}));
    }
    out.push_back(format(spec, "amp-fp16", Precision::AmpFp16, false, device.fp16));
    out.push_back(format(spec, "amp-bf16", Precision::AmpBf16, false, device.bf16));
    out.push_back(format(spec, "fp8", Precision::Fp8, false, device.fp8));
    return out;
}

int64_t roundedBatch(int64_t batch) {
    return batch >= 16 ? batch / 8 * 8 : std::max<int64_t>(0, batch);
}

bool wantsCheckpointSearch(const ExperimentSpec& spec, const AdviceFormat& format,
                           const FormatCapacity& capacity) {
    if (!format.unsupported.empty() || !capacity.error.empty() ||
        roundedBatch(capacity.safe_batch) >= spec.micro_batch) {
        return false;
    }
    ArmSpec arm = format.arm;
    arm.checkpointing = true;
    return armProblem(spec, arm).empty();
}

std::vector<AdviceCandidate> adviceCandidates(const ExperimentSpec& spec,
                                              const std::vector<AdviceFormat>& formats,
                                              const std::vector<FormatCapacity>& capacities,
                                              LrRule rule) {
    const int64_t user = spec.micro_batch;
    std::vector<AdviceCandidate> out, unsupported;
    bool have_baseline = false;
    auto add = [&](const AdviceFormat& f, int64_t micro, int k, bool checkpointing,
                   CandidateRole role) {
        AdviceCandidate c;
        c.format = f.name;
        c.arm = f.arm;
        c.arm.lr_rule = rule;
        c.arm.checkpointing = checkpointing;
        c.arm.accumulation = k;
        c.arm.micro_batch = micro == user ? 0 : static_cast<int>(micro);
        c.arm.name = searchName(f.name, checkpointing);
        if (micro != user || k > 1) {
            c.arm.name += "-b" + std::to_string(micro) + (k > 1 ? "x" + std::to_string(k) : "");
        }
        c.role = role;
        if (f.name == "fp32" && !have_baseline) {
            c.role = CandidateRole::Baseline;
            have_baseline = true;
            out.insert(out.begin(), c);
        } else {
            out.push_back(c);
        }
    };
    for (const auto& f : formats) {
        if (f.not_for_model) {
            continue;
        }
        if (!f.unsupported.empty()) {
            AdviceCandidate c;
            c.format = f.name;
            c.arm = f.arm;
            c.arm.lr_rule = rule;
            c.role = CandidateRole::Unsupported;
            c.unsupported = f.unsupported;
            unsupported.push_back(c);
            continue;
        }
        const FormatCapacity* plain = capacityOf(capacities, f.name, false);
        if (!plain) {  // not searched (a training script owns its memory): the user's batch
            add(f, user, 1, false, CandidateRole::UserBatch);
            continue;
        }
        const int64_t fits = roundedBatch(plain->safe_batch);
        if (fits >= user) {
            add(f, user, 1, false, CandidateRole::UserBatch);
            if (fits > user) {
                add(f, fits, 1, false, CandidateRole::LargestBatch);
            }
            continue;
        }
        if (const FormatCapacity* ck = capacityOf(capacities, f.name, true)) {
            const int64_t with = roundedBatch(ck->safe_batch);
            if (with >= user) {
                add(f, user, 1, true, CandidateRole::Checkpointing);
            } else if (with > fits && with > 0) {
                const int64_t k = ceilDiv(user, with);
                add(f, ceilDiv(user, k), static_cast<int>(k), true, CandidateRole::Checkpointing);
            }
        }
        if (fits > 0) {
            const int64_t k = ceilDiv(user, fits);
            add(f, ceilDiv(user, k), static_cast<int>(k), false, CandidateRole::Accumulation);
        }
    }
    out.insert(out.end(), unsupported.begin(), unsupported.end());
    return out;
}

QualityPlan planQuality(const std::vector<PassFigure>& passes, int baseline, int leaders, int seeds,
                        int user_batch, double seconds_left) {
    QualityPlan plan;
    const PassFigure* base = nullptr;
    std::vector<const PassFigure*> others;
    for (const auto& p : passes) {
        if (!p.ok || !(p.ms_per_sample > 0) || p.effective_batch <= 0) {
            continue;
        }
        if (p.candidate == baseline) {
            base = &p;
        } else {
            others.push_back(&p);
        }
    }
    if (!base || others.empty() || leaders < 1 || seeds < 1 || user_batch < 1) {
        return plan;
    }
    std::stable_sort(others.begin(), others.end(), [](const PassFigure* a, const PassFigure* b) {
        if (a->ms_per_sample != b->ms_per_sample) {
            return a->ms_per_sample < b->ms_per_sample;
        }
        return a->effective_batch < b->effective_batch;
    });
    // What a check of `chosen` costs a sample, and the samples it trains within the budget.
    struct Sizing {
        int64_t largest = 0;
        double seconds_per_sample = 0;
        double samples = 0;
        bool fits = false;
    };
    const auto size = [&](const std::vector<const PassFigure*>& chosen) {
        Sizing z;
        double ms = 0;
        for (const auto* p : chosen) {
            z.largest = std::max(z.largest, p->effective_batch);
            ms += p->ms_per_sample;
        }
        z.seconds_per_sample = seeds * ms / 1000.0 * kQualityOverhead;
        z.samples = static_cast<double>(kQualityTargetSteps * z.largest);
        if (seconds_left > 0) {
            z.samples = std::min(z.samples, seconds_left / z.seconds_per_sample);
        }
        z.fits = z.samples >= static_cast<double>(kQualityLeastSteps * z.largest);
        return z;
    };
    plan.least_seconds = INFINITY;
    for (const auto* p : others) {
        const Sizing z = size({base, p});
        plan.least_seconds =
            std::min(plan.least_seconds,
                     static_cast<double>(kQualityLeastSteps * z.largest) * z.seconds_per_sample);
    }
    // The fastest that fit, one by one: a candidate whose larger batch the budget cannot
    // check gives way to the next fastest, so that some check runs where one can.
    std::vector<const PassFigure*> chosen{base};
    for (const auto* p : others) {
        if (chosen.size() > static_cast<size_t>(leaders)) {
            break;
        }
        chosen.push_back(p);
        if (!size(chosen).fits) {
            chosen.pop_back();
        }
    }
    if (chosen.size() < 2) {
        return plan;
    }
    const Sizing z = size(chosen);
    for (const auto* p : chosen) {
        plan.candidates.push_back(p->candidate);
    }
    plan.micro_steps = static_cast<int64_t>(std::ceil(z.samples / user_batch));
    plan.largest_batch = z.largest;
    plan.seconds = z.samples * z.seconds_per_sample;
    return plan;
}

std::string batchRefused(std::vector<int64_t> samples_per_step, int64_t effective_batch) {
    if (samples_per_step.empty() || effective_batch <= 0) {
        return {};
    }
    const auto middle = samples_per_step.begin() + static_cast<long>(samples_per_step.size() / 2);
    std::nth_element(samples_per_step.begin(), middle, samples_per_step.end());
    if (*middle == effective_batch) {
        return {};
    }
    return "it trained " + std::to_string(*middle) +
           " samples an optimizer step, not the candidate's " + std::to_string(effective_batch) +
           ": a training script must take its batch from AMPBENCH_MICRO_BATCH and "
           "AMPBENCH_ACCUMULATION (rec.settings.micro_batch, rec.accumulation)";
}

std::optional<double> parseDuration(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    double total = 0;
    size_t i = 0;
    bool any = false;
    while (i < text.size()) {
        const char* start = text.c_str() + i;
        char* end = nullptr;
        const double v = std::strtod(start, &end);
        if (end == start || !std::isfinite(v) || v < 0 || *start == '-' || *start == '+') {
            return std::nullopt;
        }
        i += static_cast<size_t>(end - start);
        double unit = 1;
        if (i < text.size()) {
            const char u = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
            if (u == 'h') {
                unit = 3600;
            } else if (u == 'm') {
                unit = 60;
                if (text.compare(i, 3, "min") == 0) {
                    i += 2;  // "5min" as "5m"
                }
            } else if (u != 's') {
                return std::nullopt;
            }
            ++i;
        } else if (any) {
            return std::nullopt;  // "1h30": a bare number after a unit says nothing
        }
        total += v * unit;
        any = true;
    }
    if (!(total > 0) || total > 30.0 * 24 * 3600) {
        return std::nullopt;
    }
    return total;
}

}  // namespace ampbench::config
