#include "core/util/Words.h"

namespace ampbench::util {

std::optional<std::vector<std::string>> splitWords(const std::string& text, std::string& error) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;  // '' is a word, so an empty `word` may still be one
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (in_word) {
                words.push_back(word);
                word.clear();
                in_word = false;
            }
            continue;
        }
        in_word = true;
        if (c == '\\') {
            if (i + 1 == text.size()) {
                error = "ends in a backslash with nothing after it";
                return std::nullopt;
            }
            word += text[++i];
        } else if (c == '\'') {
            const size_t close = text.find('\'', i + 1);
            if (close == std::string::npos) {
                error = "a single quote at character " + std::to_string(i + 1) + " is not closed";
                return std::nullopt;
            }
            word.append(text, i + 1, close - i - 1);
            i = close;
        } else if (c == '"') {
            size_t j = i + 1;
            for (; j < text.size() && text[j] != '"'; ++j) {
                if (text[j] == '\\' && j + 1 < text.size() &&
                    std::string("\"\\$`").find(text[j + 1]) != std::string::npos) {
                    ++j;
                }
                word += text[j];
            }
            if (j >= text.size()) {
                error = "a double quote at character " + std::to_string(i + 1) + " is not closed";
                return std::nullopt;
            }
            i = j;
        } else {
            word += c;
        }
    }
    if (in_word) {
        words.push_back(word);
    }
    return words;
}

std::string joinWords(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) {
            out += ' ';
        }
        const bool plain =
            !w.empty() && w.find_first_of(" \t\n\r'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos;
        if (plain) {
            out += w;
            continue;
        }
        out += '\'';
        for (const char c : w) {
            if (c == '\'') {
                out += "'\\''";  // close, an escaped quote, open again
            } else {
                out += c;
            }
        }
        out += '\'';
    }
    return out;
}

}  // namespace ampbench::util
