// The gate between CUDA-graph captures and the runs beside them (StepGraph), with
// plain threads: a capture waits for the runs mid-step and runs wait for it; runs
// that step without pause cannot keep a capture out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/train/private/CaptureGate.h"

using ampbench::train::CaptureGate;
using namespace std::chrono_literals;

TEST(CaptureGate, ACaptureWaitsForRunsMidStepAndNewStepsWaitForIt) {
    CaptureGate gate;
    gate.enter();  // a run mid-step
    std::atomic<bool> captured{false}, second_started{false};
    std::thread capture([&] {
        gate.beginCapture();
        captured = true;
        std::this_thread::sleep_for(50ms);  // room for a run that wrongly steps now
        gate.endCapture();
    });
    // Once the capture waits, it waits for the run mid-step: it has not begun.
    const auto until = std::chrono::steady_clock::now() + 120s;
    while (!gate.captureWaits() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(gate.captureWaits());
    EXPECT_FALSE(captured) << "the capture began while a run was mid-step";
    // A run arriving now waits behind the waiting capture.
    std::thread second([&] {
        gate.enter();
        second_started = true;
        EXPECT_TRUE(captured) << "a run stepped before the waiting capture";
        gate.leave();
    });
    std::this_thread::sleep_for(50ms);  // room for the run to wrongly step
    EXPECT_FALSE(second_started);
    gate.leave();  // the first run's step ends
    capture.join();
    second.join();
    EXPECT_TRUE(captured);
    EXPECT_TRUE(second_started);
    EXPECT_FALSE(gate.captureWaits());
}

TEST(CaptureGate, RunsSteppingWithoutPauseDoNotStarveACapture) {
    CaptureGate gate;
    std::atomic<bool> stop{false};
    std::atomic<int> captures{0}, entered{0}, steps{0};
    std::vector<std::thread> runs;
    for (int r = 0; r < 6; ++r) {
        runs.emplace_back([&] {
            gate.enter();
            ++entered;
            while (!stop) {
                ++steps;
                std::this_thread::sleep_for(100us);  // a step
                if (gate.captureWaits()) {           // between steps
                    gate.leave();
                    gate.enter();
                }
            }
            gate.leave();
        });
    }
    while (entered < 6)
        std::this_thread::yield();
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < 10; ++c) {
        gate.beginCapture();
        ++captures;
        gate.endCapture();
        const int before = steps;
        while (steps < before + 12)  // the runs step again between captures
            std::this_thread::yield();
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    stop = true;
    for (auto& t : runs)
        t.join();
    EXPECT_EQ(captures, 10);
    // Fair, each capture comes within steps; starved, they would not come at all.
    EXPECT_LT(took, 60s);
}
