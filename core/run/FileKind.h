#pragma once
// What is at a path (util/FileKind.h), under the names the readers of the user's
// files have always used.
#include "core/util/FileKind.h"

namespace ampbench::run {

using util::describeFileKind;
using util::describeSpecialFile;
using util::FileKind;
using util::fileKind;
using util::isSpecialFile;
using util::openRegularFile;
using util::readRest;
using util::refuseUnlessRegular;

}  // namespace ampbench::run
