// ampbench: the desktop workbench. Parses the command line and shows the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStyleFactory>

#include <csignal>
#include <cstdio>
#include <string>

#include "core/config/BuildInfo.h"
#include "core/store/Paths.h"
#include "ui/MainWindow.h"
#include "ui/MetaTypes.h"
#include "ui/Settings.h"

namespace {

/// The options, on any kind of application object: --help and --version are
/// answered before a window system is needed.
void describeOptions(QCommandLineParser& parser, const QCommandLineOption& db,
                     const QCommandLineOption& readOnly) {
    parser.setApplicationDescription("Compare FP32 and mixed-precision training runs.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption(db);
    parser.addOption(readOnly);
    // The desktop entry passes a file as an argument (`ampbench FILE`, its MIME type).
    parser.addPositionalArgument("database", "Open this database, as --db does.", "[database]");
}

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help" || arg == "-?" || arg == "--help-all" || arg == "-v" ||
            arg == "--version") {
            return true;
        }
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    // A file size limit must fail an export with "File too large", not end the program.
    std::signal(SIGXFSZ, SIG_IGN);
    QCommandLineOption db(QStringList{"d", "db"},
                          "Open this database (created when missing). Default: the last one, "
                          "else " +
                              QString::fromStdString(ampbench::store::defaultDatabasePath()),
                          "PATH");
    QCommandLineOption readOnly(
        "read-only",
        "Open the database read-only: watch it (a copy from a GPU server, a file another "
        "program trains into) without any chance of changing it.");
    if (asksForHelpOrVersion(argc, argv)) {
        // No display needed to say how to start the program (or which version it is).
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName("ampbench");
        QCoreApplication::setApplicationVersion(QString("%1 (commit %2, %3)")
                                                    .arg(ampbench::config::buildVersion(),
                                                         ampbench::config::buildCommit(),
                                                         ampbench::config::buildType()));
        QCommandLineParser parser;
        describeOptions(parser, db, readOnly);
        parser.process(app);  // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ampbench");
    QApplication::setApplicationName("ampbench");
    QApplication::setApplicationDisplayName("AMP Workbench");
    QApplication::setApplicationVersion(ampbench::config::buildVersion());
    QApplication::setStyle(QStyleFactory::create("Fusion"));

    QCommandLineParser parser;
    describeOptions(parser, db, readOnly);
    parser.process(app);
    QString named = parser.value(db);
    if (named.isEmpty() && !parser.positionalArguments().isEmpty()) {
        named = parser.positionalArguments().first();
    }
    if (parser.positionalArguments().size() > 1 ||
        (!parser.value(db).isEmpty() && !parser.positionalArguments().isEmpty())) {
        std::fprintf(stderr, "ampbench: give one database (--db PATH or PATH), not %s\n",
                     qPrintable(parser.positionalArguments().join(' ')));
        return 2;
    }

    ampbench::ui::registerMetaTypes();
    ampbench::ui::Settings settings;
    ampbench::ui::MainWindow window(settings);
    window.show();

    QString path = named.isEmpty() ? settings.lastDatabase() : named;
    const bool watchOnly = parser.isSet(readOnly);
    if (path.isEmpty() || !window.openDatabase(path, watchOnly)) {
        if (named.isEmpty()) {  // fall back only when the user named nothing
            window.openDatabase(QString::fromStdString(ampbench::store::defaultDatabasePath()),
                                watchOnly);
        }
    }
    return app.exec();
}
