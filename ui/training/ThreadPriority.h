#pragma once
// Scheduling priority of the calling thread. On Linux the nice value belongs to
// each thread, and threads inherit their creator's; elsewhere these do nothing.

namespace ampbench::ui {

/// The calling thread's nice value (0 where threads have none of their own).
int currentThreadNice();
/// Raises the calling thread's nice value to at least `nice` (lowering its
/// priority, which needs no privilege); true when it is now at least `nice`.
bool lowerCurrentThreadPriority(int nice);

}  // namespace ampbench::ui
