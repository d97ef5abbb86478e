// The schedulers `launch` offers, in the order offered: one line each, naming the
// function (defined beside the scheduler's class) that gives its one instance. This
// line is a scheduler's whole registration; Schedulers.cpp reads the list.
// No include guard: read once per use, with AMPBENCH_SCHEDULER defined.
AMPBENCH_SCHEDULER(slurmScheduler)
AMPBENCH_SCHEDULER(gridEngineScheduler)
