#pragma once
// What the CLI prints for people. Every line goes through one filter, so a string
// read from the database, a job file or an ingested stream (a name, a time, an
// error, an environment field) cannot move the cursor, retitle the window or hide
// output, whichever field it came from.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace ampbench::cli {

/// printf to `out`, the text shown through analysis::printable: control characters,
/// ESC, C1 controls and bytes that are not UTF-8 appear as \xNN; newlines and tabs
/// stay. The CLI's own terminal sequences (the progress bar's redraw) are written
/// apart from it.
void say(std::FILE* out, const char* format, ...) __attribute__((format(printf, 2, 3)));

/// JSON for stdout: bytes that are not UTF-8 become U+FFFD instead of an exception,
/// and on a terminal everything beyond ASCII is written as \uXXXX, so no C1 control
/// reaches it; a pipe gets the text as it is.
std::string jsonText(const nlohmann::json& value, int indent = -1, std::FILE* out = stdout);

/// jsonText and a newline on stdout.
void printJson(const nlohmann::json& value, int indent = -1);

}  // namespace ampbench::cli
