// The tables the analysis feeds: the capacity chart, the summary that takes the
// verdict's runs, stored arms read back, printable and valid UTF-8 text and the
// findings' table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/analysis/CapacityChart.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Finding.h"
#include "core/analysis/Format.h"
#include "core/analysis/Summary.h"
#include "core/util/Utf8.h"
#include "tests/core/AnalysisFixtures.h"

using namespace ampbench::analysis::fixtures;
using namespace ampbench;
using namespace ampbench::analysis;

namespace {
store::BatchSearchRow search(int64_t id, const std::string& arm, const std::string& precision,
                             bool ckpt, int64_t max_batch, const std::string& status) {
    store::BatchSearchRow r;
    r.id = id;
    r.arm = arm;
    r.precision = precision;
    r.checkpointing = ckpt;
    r.max_batch = max_batch;
    r.status = status;
    return r;
}
}  // namespace

TEST(CapacityChart, RatiosAgainstFp32WithoutCheckpointingAndNewestSearchWins) {
    const std::vector<store::BatchSearchRow> rows = {
        search(1, "amp-ckpt", "fp16", true, 368, "finished"),
        search(2, "fp32-ckpt", "fp32", true, 300, "finished"),
        search(3, "fp32", "fp32", false, 100, "cancelled"),
        search(4, "amp", "fp16", false, 216, "finished"),
        search(5, "fp32", "fp32", false, 144, "finished"),  // a newer search of fp32
    };
    const auto chart = analysis::capacityChart(rows);
    EXPECT_EQ(chart.baseline, "fp32");
    ASSERT_EQ(chart.bars.size(), 4u);
    EXPECT_EQ(chart.bars[0].arm, "amp-ckpt");  // first searched first
    EXPECT_EQ(chart.bars[2].arm, "fp32");
    EXPECT_EQ(chart.bars[2].max_batch, 144);
    EXPECT_EQ(chart.bars[2].status, "finished");
    EXPECT_NEAR(chart.bars[0].ratio, 368.0 / 144.0, 1e-12);
    EXPECT_NEAR(chart.bars[3].ratio, 1.5, 1e-12);
    EXPECT_NEAR(chart.bars[2].ratio, 1.0, 1e-12);
}

TEST(CapacityChart, WithoutFp32TheFirstArmIsTheBaselineAndZeroHasNoRatio) {
    const auto chart = analysis::capacityChart({search(7, "bf16", "bf16", false, 0, "running"),
                                                search(8, "fp16", "fp16", false, 64, "finished")});
    EXPECT_EQ(chart.baseline, "bf16");
    ASSERT_EQ(chart.bars.size(), 2u);
    EXPECT_TRUE(std::isnan(chart.bars[1].ratio));  // the baseline found nothing yet
    EXPECT_TRUE(analysis::capacityChart({}).bars.empty());
}

TEST(Summary, TheTableTakesExactlyTheRunsTheVerdictJudges) {
    ExperimentData d;
    d.experiment.id = 1;
    auto add = [&](const std::string& arm, uint64_t seed, run::RunStatus status, double acc,
                   double ms, int64_t mem) {
        RunShape s;
        s.arm = arm;
        s.precision = arm == "fp32" ? "fp32" : "amp-bf16";
        s.seed = seed;
        s.status = status;
        s.accuracy = acc;
        s.ms_per_sample = ms;
        RunData r = makeRun(static_cast<int64_t>(d.runs.size()) + 1, s);
        for (auto& st : r.steps) {
            st.mem_peak = mem;
        }
        d.runs.push_back(std::move(r));
    };
    const auto finished = run::RunStatus::Finished, cancelled = run::RunStatus::Cancelled;
    add("fp32", 1, finished, 0.7675, 1.0, 400 << 20);
    add("fp32", 2, cancelled, 0.8475, 0.6, 900 << 20);
    add("fp32", 3, cancelled, 0.8475, 0.6, 900 << 20);
    add("amp", 1, finished, 0.7600, 0.5, 200 << 20);
    add("amp", 2, cancelled, 0.9000, 0.2, 100 << 20);
    add("amp-accum", 1, cancelled, 0.9000, 0.2, 100 << 20);

    const auto a = analyzeExperiment(d);
    std::vector<RunSummary> every;  // what `show -e` reads: every run of the experiment
    for (const auto& r : d.runs) {
        every.push_back(summarizeRun(r.row, r.steps, r.evals));
    }
    for (const auto& arms : {summarizeArms(every), a.arms}) {
        ASSERT_GE(arms.size(), 2u);
        const ArmSummary& base = arms[0];
        EXPECT_EQ(base.arm, "fp32");
        EXPECT_EQ(base.finished, 1);
        EXPECT_DOUBLE_EQ(base.val_accuracy, 0.7675) << "the cancelled runs' 84.75% stay out";
        EXPECT_TRUE(std::isnan(base.val_accuracy_sd));
        EXPECT_EQ(base.peak_mem, int64_t{400} << 20);
        const ArmSummary& amp = arms[1];
        EXPECT_EQ(amp.arm, "amp");
        const Gains& g = verdictOf(a, "amp").gains;
        EXPECT_DOUBLE_EQ(amp.speedup, g.speedup) << "one figure in the table and the verdict";
        EXPECT_DOUBLE_EQ(amp.memory_ratio, g.memory_ratio);
        EXPECT_NEAR(amp.speedup, 2.0, 0.2);
        EXPECT_DOUBLE_EQ(amp.memory_ratio, 0.5);
    }
    // The table as `show -e` prints it.
    const auto arms = summarizeArms(every);
    ASSERT_EQ(arms.size(), 3u);
    EXPECT_EQ(arms[0].runs, 3);
    const ArmSummary& none = arms[2];
    EXPECT_EQ(none.finished, 0);
    EXPECT_EQ(none.runs, 1);
    EXPECT_TRUE(std::isnan(none.speedup));
    EXPECT_TRUE(std::isnan(none.memory_ratio));
    EXPECT_TRUE(std::isnan(none.val_accuracy));
    EXPECT_EQ(none.peak_mem, 0);
    const std::string table = comparisonTable(arms, "peak memory").render();
    EXPECT_NE(table.find("1/3"), std::string::npos) << table;
    EXPECT_NE(table.find("76.75%"), std::string::npos) << table;
    EXPECT_EQ(table.find("80.75%"), std::string::npos) << table;
    EXPECT_EQ(table.find("0.00\xC3\x97"), std::string::npos) << table;
    std::string row = table.substr(table.find("amp-accum"));
    row = row.substr(0, row.find('\n'));
    for (const char* figure : {"ms", "%", "\xC3\x97", "MiB"}) {
        EXPECT_EQ(row.find(figure), std::string::npos)
            << "no figure without a finished run: " << row;
    }
}

// A run's stored arm that cannot be read is named with its run and field, instead
// of reading as the default arm (fp32) and misleading the verdict.
TEST(ExperimentData, AStoredArmThatCannotBeReadIsNamedWithItsField) {
    RunShape s;
    s.arm = "amp";
    s.precision = "amp-bf16";
    RunData r = makeRun(7, s);
    EXPECT_EQ(storedArmProblem(r.row), "");
    auto problem = [&](const std::string& spec_json) {
        store::RunRow row = r.row;
        row.spec_json = spec_json;
        return storedArmProblem(row);
    };
    EXPECT_EQ(problem("not json"), "run 7's stored arm (runs.spec_json) is not JSON");
    EXPECT_EQ(problem("[1]"), "run 7's stored arm (runs.spec_json) is a JSON array, not an object");
    EXPECT_EQ(problem(R"({"model": 5})"),
              "run 7's stored arm (runs.spec_json) names no arm, but the run is arm \"amp\"");
    EXPECT_EQ(problem(R"({"name": "amp", "accumulation": "x"})"),
              "run 7's stored arm (runs.spec_json): accumulation = \"x\": expected an integer");
    EXPECT_NE(problem(R"({"name": "amp", "lr": "fast"})").find("lr = \"fast\": expected a number"),
              std::string::npos);
    EXPECT_NE(problem(R"({"name": "amp", "resolved_precision": "fp4"})").find("not a precision"),
              std::string::npos);
    EXPECT_NE(problem(R"({"name": "fp32"})").find("names arm \"fp32\""), std::string::npos);
    // Nothing recorded (the column's default) is no damage either, nor a field a
    // newer build added.
    EXPECT_EQ(problem("{}"), "");
    EXPECT_EQ(problem(R"({"name": "amp", "precision": "amp-bf16", "future_field": 1})"), "");
}

// What a terminal is shown of stored text: bytes that are not UTF-8 are escaped
// like control characters, so no stray byte becomes an 8-bit control sequence.
TEST(Format, PrintableEscapesInvalidUtf8AndKeepsValidText) {
    EXPECT_EQ(printable("caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80"),
              "caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80");
    EXPECT_EQ(printable("a\x9B"
                        "31mb"),
              "a\\x9B31mb");                                  // a lone 8-bit CSI
    EXPECT_EQ(printable("\xFF\xFE"), "\\xFF\\xFE");           // never UTF-8
    EXPECT_EQ(printable("\xC3"), "\\xC3");                    // cut short
    EXPECT_EQ(printable("\xC0\x9B"), "\\xC0\\x9B");           // overlong
    EXPECT_EQ(printable("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
    EXPECT_EQ(printable("\xC2\x9B"), "\\x9B");                // C1 as UTF-8
    EXPECT_EQ(printable("\x1B]0;title\x07"), "\\x1B]0;title\\x07");
    EXPECT_EQ(printable("tab\tline\n"), "tab\tline\n");
}

// The bidirectional controls reorder a terminal's line: shown as \uXXXX; the other
// characters around them, and U+2065 and U+202F beside their ranges, stay.
TEST(Format, PrintableEscapesBidirectionalControls) {
    EXPECT_EQ(printable("exp\u202Egpj.exe"), "exp\\u202Egpj.exe");
    EXPECT_EQ(printable("\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C"),
              "\\u202A\\u202B\\u202C\\u202D\\u2066\\u2067\\u2068\\u2069\\u200E\\u200F"
              "\\u061C");
    EXPECT_EQ(printable("\u2065\u202F\u200D\u05D0 caf\u00E9"),
              "\u2065\u202F\u200D\u05D0 caf\u00E9");
}

TEST(Utf8, EachByteThatStartsNoCharacterBecomesTheReplacementCharacter) {
    using ampbench::util::isUtf8;
    using ampbench::util::validUtf8;
    const std::string fffd = "\xEF\xBF\xBD";
    const std::string valid = "caf\xC3\xA9 \xE2\x80\x93 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF";
    EXPECT_TRUE(isUtf8(valid));
    EXPECT_EQ(validUtf8(valid), valid);
    EXPECT_EQ(validUtf8(""), "");
    EXPECT_EQ(validUtf8("a\xFF\xFE"
                        "b"),
              "a" + fffd + fffd + "b");                                   // never UTF-8
    EXPECT_EQ(validUtf8("end \xC3"), "end " + fffd);                      // cut short
    EXPECT_EQ(validUtf8("\xE2\x80x"), fffd + fffd + "x");                 // cut short inside
    EXPECT_EQ(validUtf8("\xC0\x9B"), fffd + fffd);                        // overlong
    EXPECT_EQ(validUtf8("\xE0\x80\xAF"), fffd + fffd + fffd);             // overlong
    EXPECT_EQ(validUtf8("\xED\xA0\x80"), fffd + fffd + fffd);             // a surrogate
    EXPECT_EQ(validUtf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
    EXPECT_EQ(validUtf8("\x80lone"), fffd + "lone");                      // a stray continuation
    EXPECT_EQ(validUtf8(std::string("nul\0kept", 9)), std::string("nul\0kept", 9));
    for (const char* bad : {"\xFF", "\xC3", "\xC0\x9B", "\xED\xA0\x80", "\xF4\x90\x80\x80"}) {
        EXPECT_FALSE(isUtf8(bad)) << bad;
        EXPECT_TRUE(isUtf8(validUtf8(bad))) << bad;
    }
}

// One table holds every code's name and sentence: each code has its own stable
// JSON name and a sentence, and a value past the last code reads as "unknown".
TEST(Finding, EveryCodeHasItsOwnNameAndASentence) {
    std::set<std::string> names;
    for (int i = 0; i <= static_cast<int>(kLastFindingCode); ++i) {
        Finding f;
        f.code = static_cast<FindingCode>(i);
        const std::string name = codeName(f.code);
        EXPECT_NE(name, "unknown") << i;
        EXPECT_TRUE(!name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
        })) << name;
        EXPECT_TRUE(names.insert(name).second) << name << " names two codes";
        EXPECT_FALSE(describe(f).empty()) << name;
    }
    EXPECT_EQ(codeName(FindingCode::ScalerMissing), "scaler_missing");
    EXPECT_EQ(codeName(FindingCode::NoScaleControl), "noscale_control");
    Finding past;
    past.code = static_cast<FindingCode>(static_cast<int>(kLastFindingCode) + 1);
    EXPECT_EQ(codeName(past.code), "unknown");
    EXPECT_EQ(describe(past), "unknown");
}

// How busy the GPU keeps during a step comes from each run's DeviceBusy event (the
// device time of one step's work) against its median timed step: a reason on every
// arm that measured it, and the launch-bound next check where the GPU idles most of
// the step. Runs without the event (the CPU) give neither figure.
TEST(Verdict, TheDeviceBusyShareIsAReasonAndALowOneIsLaunchBound) {
    auto d = fp32AndAmp("busy", "amp-fp16", {}, [](RunData& r, const RunShape& s) {
        std::vector<double> times;
        for (const auto& st : r.steps) {
            if (st.timed)
                times.push_back(st.step_ms);
        }
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        // fp32 busy 90 % of its step, amp 25 % (seed 3 of amp measured nothing).
        const double share = s.arm == "amp" ? 0.25 : 0.90;
        if (!(s.arm == "amp" && s.seed == 3))
            r.events.push_back(
                {r.steps.back().step, run::EventKind::DeviceBusy, "device time", share * median});
    });
    const auto a = analyzeExperiment(d);
    const auto& base = verdictOf(a, "fp32");
    EXPECT_NEAR(base.health.device_busy_share, 0.90,
                1e-3);  // medians of even counts differ a little
    EXPECT_EQ(base.health.busy_runs, 3);
    EXPECT_FALSE(base.health.launch_bound);
    const auto& amp = verdictOf(a, "amp");
    EXPECT_NEAR(amp.health.device_busy_share, 0.25, 1e-3);
    EXPECT_EQ(amp.health.busy_runs, 2);
    EXPECT_TRUE(amp.health.launch_bound);
    auto has = [](const std::vector<Finding>& list, FindingCode code) {
        return std::any_of(list.begin(), list.end(),
                           [code](const Finding& f) { return f.code == code; });
    };
    EXPECT_TRUE(has(base.reasons, FindingCode::DeviceBusy));
    EXPECT_FALSE(has(base.next_checks, FindingCode::LaunchBound));
    EXPECT_TRUE(has(amp.reasons, FindingCode::DeviceBusy));
    ASSERT_TRUE(has(amp.next_checks, FindingCode::LaunchBound));
    std::string text;
    for (const auto& f : amp.next_checks) {
        if (f.code == FindingCode::LaunchBound)
            text = describe(f);
    }
    EXPECT_NE(text.find("AMP cannot pay here: the GPU is busy 25% of the step"), std::string::npos)
        << text;
    EXPECT_NE(text.find("cuda_graph"), std::string::npos) << text;

    // Without the events nothing is said about the GPU's share.
    for (auto& r : d.runs)
        r.events.clear();
    const auto cpu = analyzeExperiment(d);
    EXPECT_FALSE(std::isfinite(verdictOf(cpu, "amp").health.device_busy_share));
    EXPECT_FALSE(has(verdictOf(cpu, "amp").reasons, FindingCode::DeviceBusy));
    EXPECT_FALSE(has(verdictOf(cpu, "amp").next_checks, FindingCode::LaunchBound));
}

// An fp8 arm's cast records say where FP8 first clipped values: the earliest cast that
// saturated (the largest share at that step) is a reason naming the tensor, its
// format, share and scale, with how many recorded casts saturated and, for delayed
// scaling, the margin or current scaling as the way out.
TEST(Verdict, TheFirstFp8CastThatSaturatedIsNamed) {
    ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = "fp8";
    int64_t id = 1;
    for (const char* arm : {"bf16", "fp8"}) {
        for (uint64_t seed = 1; seed <= 2; ++seed) {
            RunShape s;
            s.arm = arm;
            s.seed = seed;
            s.precision = std::string(arm) == "fp8" ? "fp8" : "amp-bf16";
            RunData r = makeRun(id++, s);
            if (std::string(arm) == "fp8") {
                for (int64_t step : {10, 20, 30}) {
                    for (const char* name : {"blocks.0.fc1:input", "blocks.1.fc2:grad_output"}) {
                        run::NumericsRecord c;
                        c.step = step;
                        c.kind = run::NumericsKind::Cast;
                        c.name = name;
                        c.format =
                            std::string(name).find("grad") != std::string::npos ? "e5m2" : "e4m3";
                        c.scale = 12.5;
                        // seed 2's fc1 input clips from step 20 on, its gradient at 30.
                        c.saturated = seed == 2 && step >= 20 && c.format == "e4m3" ? 0.021
                                      : seed == 2 && step == 30                     ? 0.5
                                                                                    : 0.0;
                        r.numerics.push_back(c);
                    }
                }
            }
            d.runs.push_back(std::move(r));
        }
    }
    const auto a = analyzeExperiment(d);
    const auto& fp8 = verdictOf(a, "fp8");
    EXPECT_EQ(fp8.health.recorded_casts, 12);
    EXPECT_EQ(fp8.health.saturated_casts, 3);
    std::string text;
    for (const auto& f : fp8.reasons) {
        if (f.code == FindingCode::Fp8Saturation) {
            text = describe(f);
        }
    }
    EXPECT_NE(text.find("FP8 saturation first in `blocks.0.fc1:input` (e4m3) at step 20: 2.10% "
                        "of its values clipped"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("scale 12.5 (seed 2); 3 of 12 recorded casts saturated"), std::string::npos)
        << text;
    EXPECT_NE(text.find("fp8_margin"), std::string::npos) << text;
    for (const auto& f : verdictOf(a, "bf16").reasons) {
        EXPECT_NE(f.code, FindingCode::Fp8Saturation);
    }
    EXPECT_EQ(codeName(FindingCode::Fp8Saturation), "fp8_saturation");
}
