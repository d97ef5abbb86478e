#pragma once
// Help › Contents: the README, one section at a time beside a list of them, and a
// page of the window's keyboard shortcuts (collected from its actions by the caller).
#include <QDialog>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

class QListWidget;
class QStackedWidget;
class QTableWidget;
class QTextBrowser;
class QUrl;

namespace ampbench::ui {

/// One "## " section of a Markdown file: its heading, the anchor GitHub gives it,
/// the anchors of the headings inside it, and its text (heading included).
struct HelpSection {
    QString title;
    QString anchor;
    QStringList inner_anchors;
    QString markdown;
};

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as
/// hyphens ("Your data is safe" → "your-data-is-safe").
QString headingAnchor(const QString& heading);

/// `markdown` cut at its "## " headings (not inside ``` fences); the text before the
/// first one is a section titled by the "# " heading (`overview` when there is none).
QList<HelpSection> markdownSections(const QString& markdown, const QString& overview);

class HelpWindow : public QDialog {
    Q_OBJECT
  public:
    /// `readmePath` empty or unreadable: the window says where the README was looked
    /// for. `shortcuts`: keys and what they do, in order.
    HelpWindow(const QString& readmePath, const QList<QPair<QString, QString>>& shortcuts,
               QWidget* parent = nullptr);

    /// Replaces the shortcuts page's rows.
    void setShortcuts(const QList<QPair<QString, QString>>& shortcuts);
    /// The topics in the list, in order: the README's sections, then the shortcuts.
    QStringList topics() const;
    /// Shows the topic titled `topic`, or the section holding anchor `topic`; false
    /// when there is none.
    bool showTopic(const QString& topic);
    QString currentTopic() const;
    /// The title of the shortcuts page.
    static QString shortcutsTopic();

    QTextBrowser* browser() const { return browser_; }
    QTableWidget* shortcutsTable() const { return shortcuts_; }
    QListWidget* topicList() const { return list_; }

  private:
    void showRow(int row);
    void follow(const QUrl& url);

    QString baseDir_;  // the README's folder, for its relative links and images
    QList<HelpSection> sections_;
    QListWidget* list_ = nullptr;
    QStackedWidget* pages_ = nullptr;
    QTextBrowser* browser_ = nullptr;
    QTableWidget* shortcuts_ = nullptr;
};

}  // namespace ampbench::ui
