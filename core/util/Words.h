#pragma once
// A command line's arguments as one line of text and back (a training script's
// arguments in the spec and the editor): split as a POSIX shell would, without
// expansion; joined so that splitting gives the same words.
#include <optional>
#include <string>
#include <vector>

namespace ampbench::util {

/// The words of `text`: whitespace separates them; '…' keeps everything inside as it
/// is, "…" keeps it but for \" \\ \$ \` escapes, and a backslash outside quotes keeps the
/// next character. nullopt with `error` set when a quote is not closed or the text
/// ends in a lone backslash.
std::optional<std::vector<std::string>> splitWords(const std::string& text, std::string& error);

/// The words as one line that splitWords reads back as the same words: plain words as
/// they are, others in single quotes (an empty word as '').
std::string joinWords(const std::vector<std::string>& words);

}  // namespace ampbench::util
