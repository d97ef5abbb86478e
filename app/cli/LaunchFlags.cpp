// `launch`'s scheduler flags from the schedulers' declarations (LaunchFlags.h).
#include "cli/LaunchFlags.h"

#include <algorithm>
#include <set>

#include "cli/Terminal.h"
#include "core/launch/Scheduler.h"

namespace ampbench::cli {

namespace {

/// The schedulers that declare an option with `flag`, in the order offered.
std::vector<const launch::Scheduler*> declaring(const std::string& flag) {
    std::vector<const launch::Scheduler*> out;
    for (const launch::Scheduler* s : launch::schedulers()) {
        for (const auto& o : s->info().options) {
            if (o.flag == flag) {
                out.push_back(s);
                break;
            }
        }
    }
    return out;
}

/// "a, b and c".
std::string listed(const std::vector<std::string>& words, const char* last = " and ") {
    std::string text;
    for (size_t i = 0; i < words.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == words.size() ? last : ", ") + words[i];
    }
    return text;
}

}  // namespace

void addSchedulerFlags(CLI::App* launch, LaunchOptions& o) {
    std::vector<CLI::Option*> switches;
    for (const launch::Scheduler* s : launch::schedulers()) {
        const auto& info = s->info();
        auto* sw = launch->add_flag("--" + info.name, o.scheduler_switches[info.name],
                                    "submit the runs as one " + info.title + " job array (" +
                                        info.summary +
                                        "); a collector on this host records the tasks' "
                                        "streams into the database");
        for (CLI::Option* other : switches) {
            sw->excludes(other);
        }
        switches.push_back(sw);
    }
    std::set<std::string> added;
    for (const launch::Scheduler* s : launch::schedulers()) {
        for (const auto& option : s->info().options) {
            if (!added.insert(option.flag).second) {
                continue;  // a flag two schedulers share is one option
            }
            std::string help;
            for (const launch::Scheduler* d : declaring(option.flag)) {
                const launch::LaunchOption* own = nullptr;
                for (const auto& o2 : d->info().options) {
                    own = o2.flag == option.flag ? &o2 : own;
                }
                help += (help.empty() ? "" : "; ") + own->help + " (with --" + d->info().name + ")";
            }
            auto* opt = launch->add_option(option.flag, o.scheduler_flags[option.flag], help);
            if (option.kind == launch::OptionKind::Words) {
                opt->allow_extra_args(false);  // repeatable, one word each
            } else {
                opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
            }
            if (option.kind == launch::OptionKind::Count) {
                opt->check(CLI::Range(option.min, option.max));
            }
        }
    }
}

bool isSchedulerSwitch(const CLI::Option* opt) {
    for (const launch::Scheduler* s : launch::schedulers()) {
        if (opt->get_name() == "--" + s->info().name) {
            return true;
        }
    }
    return false;
}

bool sortSchedulerFlags(LaunchOptions& o) {
    const launch::Scheduler* chosen = nullptr;
    for (const auto& [name, on] : o.scheduler_switches) {
        if (on) {
            chosen = launch::schedulerNamed(name);
        }
    }
    o.scheduler = chosen ? chosen->info().name : std::string();
    o.scheduler_options.clear();
    for (const auto& [flag, words] : o.scheduler_flags) {
        if (words.empty()) {
            continue;
        }
        const launch::LaunchOption* option = nullptr;
        if (chosen) {
            for (const auto& declared : chosen->info().options) {
                option = declared.flag == flag ? &declared : option;
            }
        }
        if (option != nullptr) {
            o.scheduler_options[option->key] = words;
            continue;
        }
        // An option of a scheduler not chosen: say whose it is and how to choose it.
        const auto owners = declaring(flag);
        std::vector<std::string> titles, switches;
        for (const launch::Scheduler* s : owners) {
            titles.push_back(s->info().title);
            switches.push_back("--" + s->info().name);
        }
        if (owners.size() == 1) {
            std::vector<std::string> flags;
            for (const auto& declared : owners.front()->info().options) {
                flags.push_back(declared.flag);
            }
            say(stderr, "launch: %s %s %s's: %s %s\n", listed(flags).c_str(),
                flags.size() == 1 ? "is" : "are", titles.front().c_str(), chosen ? "use" : "add",
                switches.front().c_str());
        } else {
            say(stderr, "launch: %s is an option of %s: %s %s\n", flag.c_str(),
                listed(titles).c_str(), chosen ? "use" : "add", listed(switches, " or ").c_str());
        }
        return false;
    }
    if (chosen) {
        const auto problems =
            launch::checkOptions(chosen->info(), o.scheduler_options, launch::Naming::Flag);
        for (const auto& p : problems) {
            say(stderr, "launch --%s: %s\n", o.scheduler.c_str(), p.c_str());
        }
        return problems.empty();
    }
    return true;
}

}  // namespace ampbench::cli
