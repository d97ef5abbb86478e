// The advice's words: the recommendation with its evidence, each row's place and quality,
// the table, the spec of the recommended setting and the lines for a PyTorch loop.
#include <cmath>
#include <cstdio>

#include "core/analysis/Advice.h"
#include "core/config/Placement.h"

namespace ampbench::analysis {
namespace {

std::string fixed(double v, int decimals) {
    return formatNumber(v, decimals);
}

/// "amp-bf16 at batch 512", "fp32 at batch 32 × 2 accumulated (64), checkpointing".
std::string settingText(const CandidateFigures& f) {
    std::string text = f.format + " at batch " + std::to_string(f.micro_batch);
    if (f.accumulation > 1) {
        text += " \xC3\x97 " + std::to_string(f.accumulation) + " accumulated (" +
                std::to_string(f.effective_batch) + ")";
    }
    if (f.checkpointing) {
        text += ", checkpointing";
    }
    return text;
}

std::string ruleOutText(const AdviceRow& r, const std::string& baseline) {
    switch (r.why) {
        case RuleOut::PassFailed:
            return "its pass failed: " + r.f.failure;
        case RuleOut::Diverged:
            return "diverged from " + baseline + " (" + describe(r.f.summary) + ")";
        case RuleOut::LeftBand:
            return "left " + baseline + "'s seed band (" + fixed(r.f.band_units, 1) +
                   " band widths at the end)";
        case RuleOut::SkippedSteps:
            return "skipped " + std::to_string(r.f.late_skipped) + " of " +
                   std::to_string(r.f.steps) + " optimizer steps after calibrating its scale";
        case RuleOut::None:
            break;
    }
    return {};
}

/// The evidence of a row against the baseline: "2.3× fp32's samples/s at 0.48× its memory".
std::string gainText(const AdviceRow& r, const std::string& baseline) {
    std::string text = formatRatio(r.speed_ratio) + " " + baseline + "'s samples/s";
    if (std::isfinite(r.memory_ratio)) {
        text += " at " + formatRatio(r.memory_ratio) + " its memory";
    }
    return text;
}

std::string quoted(const std::string& text) {
    return "\"" + text + "\"";
}

}  // namespace

std::string qualityText(const AdviceRow& r) {
    if (!r.f.checked) {
        return "not checked";
    }
    std::string text = toString(r.f.verdict);
    if (r.f.verdict == Verdict::Baseline) {
        return r.f.noise_known ? "the seed band" : "baseline, one seed";
    }
    if (std::isfinite(r.f.band_units)) {
        text += ", " + fixed(r.f.band_units, 1) + " band widths";
    }
    return text;
}

std::string statusText(const AdviceRow& r) {
    switch (r.status) {
        case RowStatus::Ranked:
            return std::to_string(r.rank);
        case RowStatus::RuledOut:
            return "ruled out";
        case RowStatus::NotMeasured:
            return "not measured";
        case RowStatus::Unsupported:
            return "cannot train here";
    }
    return "?";
}

std::string reasonText(const AdviceRow& r, const std::string& baseline) {
    switch (r.status) {
        case RowStatus::RuledOut:
            return ruleOutText(r, baseline);
        case RowStatus::NotMeasured:
            return "its pass did not finish";
        case RowStatus::Unsupported:
            return r.f.unsupported;
        case RowStatus::Ranked:
            break;
    }
    return {};
}

std::string shortReason(const AdviceRow& r) {
    switch (r.why) {
        case RuleOut::PassFailed:
            return "its pass failed";
        case RuleOut::Diverged:
            return "diverged";
        case RuleOut::LeftBand:
            return "left the seed band";
        case RuleOut::SkippedSteps:
            return "skipped steps";
        case RuleOut::None:
            break;
    }
    return r.status == RowStatus::Unsupported ? "cannot train here" : std::string();
}

std::string recommendationText(const Advice& a) {
    const AdviceRow* r = a.recommendation();
    const std::string& base = a.baseline;
    switch (a.kind) {
        case Recommendation::Candidate: {
            std::string text = settingText(r->f) + ": " + gainText(*r, base) + "; ";
            if (r->f.verdict == Verdict::Aligned && std::isfinite(r->f.band_units) &&
                r->f.band_units <= 1.0) {
                text += "curves inside " + base + "'s seed band, " + fixed(r->f.band_units, 1) +
                        " band widths";
            } else {
                text += describe(r->f.summary);
            }
            if (r->f.effective_batch != a.user_batch && std::isfinite(r->f.lr)) {
                text += "; learning rate " + formatSignificant(r->f.lr, 4) + " (" +
                        config::toString(r->f.lr_rule) + " rule for batch " +
                        std::to_string(r->f.effective_batch) + ")";
            }
            return text;
        }
        case Recommendation::Unchecked:
            return settingText(r->f) + ": " + gainText(*r, base) +
                   "; its curves were not checked against " + base +
                   "'s (no quality check ran): train the spec below to check them";
        case Recommendation::KeepBaseline: {
            std::string why;
            for (const auto& row : a.rows) {
                if (row.f.arm == base || row.status == RowStatus::Unsupported ||
                    row.status == RowStatus::NotMeasured) {
                    continue;
                }
                std::string reason = row.status == RowStatus::RuledOut
                                         ? ruleOutText(row, base)
                                         : formatRatio(row.speed_ratio) + " its samples/s" +
                                               (row.f.checked ? "" : ", not checked");
                why += (why.empty() ? "" : "; ") + row.f.arm + ": " + reason;
            }
            return "keep " + settingText(r->f) + ": no candidate both kept its curves and gained" +
                   (why.empty() ? std::string() : " (" + why + ")");
        }
        case Recommendation::Nothing:
            break;
    }
    return "no recommendation: no candidate was measured";
}

std::vector<std::string> adviceHeader(const Advice& a) {
    return {"rank",
            "setting",
            "samples/s",
            "vs " + a.baseline,
            a.memory_label.empty() ? std::string("peak") : a.memory_label,
            "vs " + a.baseline,
            "quality",
            "step of " + std::to_string(a.user_batch),
            "max batch",
            "data wait",
            "skipped"};
}

std::vector<std::vector<std::string>> adviceCells(const Advice& a) {
    std::vector<std::vector<std::string>> out;
    for (const auto& r : a.rows) {
        const CandidateFigures& f = r.f;
        std::string max_batch = f.max_batch > 0 ? std::to_string(f.max_batch) : "\xE2\x80\x93";
        if (f.max_batch_at_bound) {
            max_batch += "+";
        }
        const bool measured = f.measured;
        out.push_back(
            {statusText(r), f.arm, measured ? fixed(f.samples_per_s, 0) : "\xE2\x80\x93",
             formatRatio(r.speed_ratio), measured ? formatBytes(f.peak_bytes) : "\xE2\x80\x93",
             formatRatio(r.memory_ratio), qualityText(r), formatMs(r.user_step_ms), max_batch,
             std::isfinite(f.data_share) ? formatPercent(f.data_share, 0) : "\xE2\x80\x93",
             f.checked ? std::to_string(f.skipped) : "\xE2\x80\x93"});
    }
    return out;
}

TextTable adviceTable(const Advice& a) {
    TextTable t(adviceHeader(a));
    t.alignRight(std::vector<size_t>(kAdviceNumericColumns.begin(), kAdviceNumericColumns.end()));
    for (auto& row : adviceCells(a)) {
        t.addRow(std::move(row));
    }
    return t;
}

config::ExperimentSpec recommendedSpec(const Advice& a, const config::ExperimentSpec& spec) {
    config::ExperimentSpec s = spec;
    const std::string suffix = "-advice";
    std::string name = spec.name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
    }
    s.name = name + "-recommended";
    std::vector<config::ArmSpec> arms;
    for (const auto& arm : spec.arms) {
        if (arm.name == a.baseline) {
            arms.insert(arms.begin(), arm);
        } else if (a.recommendation() && arm.name == a.recommendation()->f.arm) {
            arms.push_back(arm);
        }
    }
    s.arms = arms;
    s.seeds = {1, 2, 3};
    s.fuse_seeds = config::Switch::Auto;
    return s;
}

std::vector<std::string> pytorchLines(const Advice& a, const config::ExperimentSpec& spec) {
    const AdviceRow* r = a.recommendation();
    if (!r) {
        return {};
    }
    const CandidateFigures& f = r->f;
    const std::string device = config::onCuda(a.device) ? "cuda" : "cpu";
    const int k = std::max(1, f.accumulation);
    std::vector<std::string> out;
    out.push_back("# " + settingText(f) + " (advice, experiment " +
                  std::to_string(a.experiment_id) + ")");
    if (f.format == "tf32") {
        out.push_back("torch.backends.cuda.matmul.allow_tf32 = True");
        out.push_back("torch.backends.cudnn.allow_tf32 = True");
    }
    out.push_back("loader = torch.utils.data.DataLoader(train_set, batch_size=" +
                  std::to_string(f.micro_batch) + ", shuffle=True, drop_last=True)");
    const auto& o = spec.optimizer;
    const std::string lr = formatSignificant(f.lr, 6);
    const std::string lr_note = f.effective_batch != a.user_batch
                                    ? "  # " + formatSignificant(o.lr, 6) + " at batch " +
                                          std::to_string(a.user_batch) + ", " +
                                          config::toString(f.lr_rule) + " rule for batch " +
                                          std::to_string(f.effective_batch)
                                    : std::string();
    if (o.kind == config::OptimizerKind::AdamW) {
        out.push_back("optimizer = torch.optim.AdamW(model.parameters(), lr=" + lr + ", betas=(" +
                      formatSignificant(o.beta1, 6) + ", " + formatSignificant(o.beta2, 6) +
                      "), eps=" + formatSignificant(o.eps, 6) +
                      ", weight_decay=" + formatSignificant(o.weight_decay, 6) + ")" + lr_note);
    } else {
        out.push_back("optimizer = torch.optim.SGD(model.parameters(), lr=" + lr +
                      ", momentum=" + formatSignificant(o.momentum, 6) +
                      ", weight_decay=" + formatSignificant(o.weight_decay, 6) +
                      (o.nesterov ? ", nesterov=True" : "") + ")" + lr_note);
    }
    const bool fp16 = f.precision == config::Precision::AmpFp16;
    const bool autocast =
        fp16 || f.precision == config::Precision::AmpBf16 || f.precision == config::Precision::Fp8;
    if (fp16) {
        out.push_back(
            "scaler = torch.amp.GradScaler(" + quoted(device) +
            ", init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000)");
    }
    if (f.precision == config::Precision::Fp8) {
        out.push_back(
            "# fp8: the Linear layers as transformer_engine.pytorch.Linear, the forward "
            "also under te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling())");
    }
    if (f.checkpointing) {
        out.push_back("# in the model's forward, each block recomputed in backward:");
        out.push_back("#     x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)");
    }
    out.push_back("for i, (x, y) in enumerate(loader):");
    std::string indent = "    ";
    if (autocast) {
        out.push_back(indent + "with torch.autocast(device_type=" + quoted(device) +
                      ", dtype=torch." + (fp16 ? "float16" : "bfloat16") + "):");
        out.push_back(indent + "    loss = loss_fn(model(x), y)" +
                      (k > 1 ? " / " + std::to_string(k) : ""));
    } else {
        out.push_back(indent + "loss = loss_fn(model(x), y)" +
                      (k > 1 ? " / " + std::to_string(k) : ""));
    }
    out.push_back(indent + (fp16 ? "scaler.scale(loss).backward()" : "loss.backward()"));
    if (k > 1) {
        out.push_back(indent + "if (i + 1) % " + std::to_string(k) + " != 0:  # accumulate " +
                      std::to_string(k) + " micro-batches a step");
        out.push_back(indent + "    continue");
    }
    if (fp16) {
        out.push_back(indent + "scaler.step(optimizer)  # skips the step on inf/NaN gradients");
        out.push_back(indent + "scaler.update()");
    } else {
        out.push_back(indent + "optimizer.step()");
    }
    out.push_back(indent + "optimizer.zero_grad(set_to_none=True)");
    return out;
}

}  // namespace ampbench::analysis
