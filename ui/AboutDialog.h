#pragma once
// Help › About: what this binary is (version, git commit, build type), what it
// runs with (Qt, LibTorch, CUDA), which database it has open, and where the
// README is.
#include <QDialog>
#include <QIcon>
#include <QList>
#include <QPair>
#include <QString>

class QLabel;

namespace ampbench::ui {

/// The window icon from the resources (PNGs of 16 to 256 px).
QIcon applicationIcon();

/// The README to link to: the installed one (<prefix>/share/doc/ampbench) beside
/// `applicationDir`'s ../share, else the source tree's where this was built from, else
/// empty. A file path.
QString readmePath(const QString& applicationDir);

/// The facts the About box shows, label and value, in order: version, commit,
/// build type, Qt, LibTorch, CUDA, database. Pure apart from probing LibTorch.
QList<QPair<QString, QString>> aboutFacts(const QString& databasePath);

class AboutDialog : public QDialog {
    Q_OBJECT
  public:
    AboutDialog(const QString& databasePath, QWidget* parent = nullptr);
    /// The rich text on show (facts and the README link), for tests.
    QString text() const;

  private:
    QLabel* text_ = nullptr;
};

}  // namespace ampbench::ui
