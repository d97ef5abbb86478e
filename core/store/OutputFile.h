#pragma once
// Files the workbench writes for the user. The writer and its database guard are
// util/OutputFile.h's, below the engine, which saves models through them; they keep
// their store:: names here, beside what the store's exports add.
#include <string>

#include "core/util/OutputFile.h"

namespace ampbench::store {

using util::guardDatabase;
using util::outputClash;
using util::OutputError;
using util::releaseDatabase;
using util::writeFileAtomically;

/// A cell that a spreadsheet would run as a formula (it starts with '=', '+', '-',
/// '@', a tab or a carriage return) gets a leading apostrophe, the usual way to say
/// "text"; a number such as "-0.5" or "-3.2%" stays as it is.
std::string spreadsheetSafe(const std::string& cell);

}  // namespace ampbench::store
