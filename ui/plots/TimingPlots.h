#pragma once
// Speed and memory per arm: step times with each arm's median, and bars of
// throughput and peak memory. Figures come from analysis::summarizeArms.

namespace ampbench::ui {

class PlotPanel;
struct PlotInput;

/// Step time of every step (warm-up included) and each arm's median over timed
/// steps; `perSample` divides by the samples of a step, so arms with different
/// accumulation compare fairly.
void drawStepTime(PlotPanel& panel, const PlotInput& input, bool perSample = false);
/// Samples/s (solid, left axis) and peak memory (hatched, right axis) per arm.
void drawArmBars(PlotPanel& panel, const PlotInput& input);

}  // namespace ampbench::ui
