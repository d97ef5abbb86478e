#pragma once
// A run trained as one member of fused seeds (spec fuse_seeds): its seeds train as one
// model, and each member records the fused step's time, which trained the samples of
// every member at once. The trainer writes this as the opening event of each member;
// the analysis reads the group's size back to share the step's time among its
// members. This file is the one definition of that event.
#include <cstdint>
#include <vector>

#include "core/run/Records.h"

namespace ampbench::run {

/// The event of a member of fused seeds `seeds` (step 0, Info, value = how many).
EventRecord fusedSeedsEvent(const std::vector<uint64_t>& seeds);
/// How many runs trained fused with the one whose event this is (itself included);
/// 0 for any other event.
int fusedGroupOf(const EventRecord& event);
/// Of a run's events: how many runs its step times were shared by (1: it trained alone).
int fusedGroupSize(const std::vector<EventRecord>& events);

}  // namespace ampbench::run
