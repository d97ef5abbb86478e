// A scheduler's declared options: checked, as arguments, in a job file, as text
// (LaunchOption.h).
#include "core/launch/LaunchOption.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ampbench::launch {

namespace {

/// "Pa&rtition:" as a name in a sentence: "Partition".
std::string nameOf(const LaunchOption& option, Naming naming) {
    if (naming == Naming::Flag) {
        return option.flag;
    }
    std::string name;
    for (char c : option.label) {
        if (c != '&') {
            name += c;
        }
    }
    while (!name.empty() && (name.back() == ':' || name.back() == ' ')) {
        name.pop_back();
    }
    return name;
}

std::string quoted(const std::string& value, Naming naming) {
    return naming == Naming::Flag ? "\"" + value + "\"" : "\u201c" + value + "\u201d";
}

/// The number `text` is, when it is a whole number that fits an int.
bool wholeNumber(const std::string& text, int& out) {
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
        return false;
    }
    out = std::stoi(text);
    return true;
}

}  // namespace

std::vector<std::string> requiredTools(const SchedulerInfo& info) {
    std::vector<std::string> out;
    for (const auto& tool : info.tools) {
        if (std::find(info.optional_tools.begin(), info.optional_tools.end(), tool) ==
            info.optional_tools.end()) {
            out.push_back(tool);
        }
    }
    return out;
}

const LaunchOption* findOption(const SchedulerInfo& info, const std::string& key) {
    for (const auto& o : info.options) {
        if (o.key == key) {
            return &o;
        }
    }
    return nullptr;
}

std::string optionWord(const OptionValues& values, const std::string& key) {
    const auto it = values.find(key);
    return it == values.end() || it->second.empty() ? std::string() : it->second.front();
}

int optionCount(const OptionValues& values, const LaunchOption& option) {
    int n = option.min;
    return wholeNumber(optionWord(values, option.key), n) ? n : option.min;
}

std::vector<std::string> optionWords(const OptionValues& values, const std::string& key) {
    const auto it = values.find(key);
    return it == values.end() ? std::vector<std::string>() : it->second;
}

std::vector<std::string> checkOptions(const SchedulerInfo& info, const OptionValues& values,
                                      Naming naming) {
    std::vector<std::string> problems;
    for (const auto& [key, words] : values) {
        const LaunchOption* option = findOption(info, key);
        if (option == nullptr) {
            problems.push_back("\"" + key + "\" is no option of " + info.title);
            continue;
        }
        const std::string name = nameOf(*option, naming);
        if (option->kind != OptionKind::Words && words.size() > 1) {
            problems.push_back(name + " takes one value, not " + std::to_string(words.size()));
            continue;
        }
        for (const auto& word : words) {
            if (option->kind == OptionKind::Count) {
                int n = 0;
                if (!wholeNumber(word, n) || n < option->min || n > option->max) {
                    problems.push_back(name + " " + quoted(word, naming) +
                                       ": a whole number from " + std::to_string(option->min) +
                                       " to " + std::to_string(option->max));
                }
                continue;
            }
            if (option->check != nullptr) {
                if (const std::string wrong = option->check(word); !wrong.empty()) {
                    problems.push_back(name + " " + quoted(word, naming) + ": " + wrong);
                }
            }
        }
    }
    return problems;
}

std::vector<std::string> launchArguments(const SchedulerInfo& info, const OptionValues& values) {
    std::vector<std::string> args = {"--" + info.name};
    for (const auto& option : info.options) {
        switch (option.kind) {
            case OptionKind::Text:
                if (const std::string word = optionWord(values, option.key); !word.empty()) {
                    args.push_back(option.flag);
                    args.push_back(word);
                }
                break;
            case OptionKind::Count:
                if (const int n = optionCount(values, option); n > option.min) {
                    args.push_back(option.flag);
                    args.push_back(std::to_string(n));
                }
                break;
            case OptionKind::Words:
                for (const auto& word : optionWords(values, option.key)) {
                    args.push_back(option.flag + "=" + word);
                }
                break;
        }
    }
    return args;
}

nlohmann::json optionsToJson(const SchedulerInfo& info, const OptionValues& values) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& option : info.options) {
        const auto it = values.find(option.key);
        if (it == values.end() || it->second.empty()) {
            continue;
        }
        if (option.kind == OptionKind::Words) {
            j[option.key] = it->second;
        } else {
            j[option.key] = it->second.front();
        }
    }
    return j;
}

OptionValues optionsFromJson(const SchedulerInfo& info, const nlohmann::json& j) {
    if (!j.is_object()) {
        throw std::invalid_argument("is not an object of " + info.title + "'s options");
    }
    OptionValues values;
    for (const auto& [key, value] : j.items()) {
        const LaunchOption* option = findOption(info, key);
        if (option == nullptr) {
            throw std::invalid_argument("\"" + key + "\" is no option of " + info.title);
        }
        if (option->kind == OptionKind::Words) {
            if (!value.is_array()) {
                throw std::invalid_argument("\"" + key + "\" is not a list of words");
            }
            for (const auto& word : value) {
                if (!word.is_string()) {
                    throw std::invalid_argument("\"" + key + "\" holds something other than words");
                }
                values[key].push_back(word.get<std::string>());
            }
        } else if (value.is_string()) {
            values[key] = {value.get<std::string>()};
        } else {
            throw std::invalid_argument("\"" + key + "\" is not a string");
        }
    }
    return values;
}

std::string settingsKey(const SchedulerInfo& info, const LaunchOption& option) {
    return info.name + "_" + option.key;
}

std::string optionText(const OptionValues& values, const LaunchOption& option) {
    std::string text;
    for (const auto& word : optionWords(values, option.key)) {
        text += (text.empty() ? "" : " ") + word;
    }
    return text;
}

void setOptionText(OptionValues& values, const LaunchOption& option, const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string word; in >> word;) {
        words.push_back(word);
    }
    if (words.empty() || (option.kind == OptionKind::Count && words.size() == 1 &&
                          words.front() == std::to_string(option.min))) {
        values.erase(option.key);
        return;
    }
    if (option.kind == OptionKind::Words) {
        values[option.key] = words;
        return;
    }
    // One value, spaces inside kept: "two hours" is refused as a time limit, not split.
    const size_t first = text.find_first_not_of(" \t\r\n");
    const size_t last = text.find_last_not_of(" \t\r\n");
    values[option.key] = {text.substr(first, last - first + 1)};
}

}  // namespace ampbench::launch
