// ampbench: the desktop workbench. Parses the command line and shows the window.
#include <QApplication>
#include <QCommandLineParser>
#include <QStyleFactory>

#include <csignal>

#include "core/store/Paths.h"
#include "ui/MainWindow.h"
#include "ui/MetaTypes.h"
#include "ui/Settings.h"

int main(int argc, char** argv) {
    // A file size limit must fail an export with "File too large", not end the program.
    std::signal(SIGXFSZ, SIG_IGN);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("ampbench");
    QApplication::setApplicationName("ampbench");
    QApplication::setApplicationDisplayName("AMP Workbench");
    QApplication::setApplicationVersion(AMPBENCH_VERSION);
    QApplication::setStyle(QStyleFactory::create("Fusion"));

    QCommandLineParser parser;
    parser.setApplicationDescription("Compare FP32 and mixed-precision training runs.");
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption db(QStringList{"d", "db"},
                          "Open this database (created when missing). Default: the last one, "
                          "else " +
                              QString::fromStdString(ampbench::store::defaultDatabasePath()),
                          "PATH");
    parser.addOption(db);
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
