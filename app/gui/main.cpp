// ampbench: the desktop workbench. Parses the command line and shows the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStyleFactory>

#include <csignal>
#include <string>

#include "core/store/Paths.h"
#include "ui/MainWindow.h"
#include "ui/MetaTypes.h"
#include "ui/Settings.h"

namespace {

/// The options, on any kind of application object: --help and --version are
/// answered before a window system is needed.
void describeOptions(QCommandLineParser& parser, const QCommandLineOption& db) {
    parser.setApplicationDescription("Compare FP32 and mixed-precision training runs.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption(db);
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
    if (asksForHelpOrVersion(argc, argv)) {
        // No display needed to say how to start the program (or which version it is).
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName("ampbench");
        QCoreApplication::setApplicationVersion(AMPBENCH_VERSION);
        QCommandLineParser parser;
        describeOptions(parser, db);
        parser.process(app);  // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ampbench");
    QApplication::setApplicationName("ampbench");
    QApplication::setApplicationDisplayName("AMP Workbench");
    QApplication::setApplicationVersion(AMPBENCH_VERSION);
    QApplication::setStyle(QStyleFactory::create("Fusion"));

    QCommandLineParser parser;
    describeOptions(parser, db);
    parser.process(app);

    ampbench::ui::registerMetaTypes();
    ampbench::ui::Settings settings;
    ampbench::ui::MainWindow window(settings);
    window.show();

    QString path = parser.value(db);
    if (path.isEmpty()) {
        path = settings.lastDatabase();
    }
    if (path.isEmpty() || !window.openDatabase(path)) {
        if (parser.value(db).isEmpty()) {  // fall back only when the user named nothing
            window.openDatabase(QString::fromStdString(ampbench::store::defaultDatabasePath()));
        }
    }
    return app.exec();
}
