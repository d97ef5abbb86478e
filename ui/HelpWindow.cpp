#include "ui/HelpWindow.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QImageReader>
#include <QListWidget>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFragment>
#include <QTextImageFormat>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

namespace ampbench::ui {
namespace {

constexpr int kMaxImageWidth = 640;  // screenshots at full size would need scrolling sideways

/// Shrinks the document's images wider than kMaxImageWidth, keeping their shape.
void fitImages(QTextDocument* doc, const QString& baseDir) {
    for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            QTextImageFormat image = fragment.charFormat().toImageFormat();
            if (!image.isValid()) {
                continue;
            }
            const QSize size = QImageReader(QDir(baseDir).filePath(image.name())).size();
            if (!size.isValid() || size.width() <= kMaxImageWidth) {
                continue;
            }
            image.setWidth(kMaxImageWidth);
            image.setHeight(double(size.height()) * kMaxImageWidth / size.width());
            QTextCursor cursor(doc);
            cursor.setPosition(fragment.position());
            cursor.setPosition(fragment.position() + fragment.length(), QTextCursor::KeepAnchor);
            cursor.setCharFormat(image);
        }
    }
}

}  // namespace

QString headingAnchor(const QString& heading) {
    QString out;
    for (const QChar c : heading.trimmed().toLower()) {
        if (c.isLetterOrNumber() || c == '-' || c == '_') {
            out += c;
        } else if (c == ' ') {
            out += '-';
        }
    }
    return out;
}

QList<HelpSection> markdownSections(const QString& markdown, const QString& overview) {
    QList<HelpSection> out;
    HelpSection current;
    current.title = overview;
    bool fenced = false;
    const QStringList lines = markdown.split('\n');
    for (const QString& line : lines) {
        if (line.startsWith(QLatin1String("```"))) {
            fenced = !fenced;
        } else if (!fenced && line.startsWith(QLatin1String("## "))) {
            if (!current.markdown.trimmed().isEmpty()) {
                out.append(current);
            }
            current = {};
            current.title = line.mid(3).trimmed();
            current.anchor = headingAnchor(current.title);
        } else if (!fenced && line.startsWith(QLatin1String("# ")) && out.isEmpty() &&
                   current.anchor.isEmpty()) {
            current.title = line.mid(2).trimmed();  // the document's title names its opening
            current.anchor = headingAnchor(current.title);
        } else if (!fenced && line.startsWith('#')) {
            static const QRegularExpression kHeading(QStringLiteral("^#{3,6} +(.*)$"));
            if (const auto m = kHeading.match(line); m.hasMatch()) {
                current.inner_anchors << headingAnchor(m.captured(1));
            }
        }
        current.markdown += line + '\n';
    }
    if (!current.markdown.trimmed().isEmpty()) {
        out.append(current);
    }
    return out;
}

QString HelpWindow::shortcutsTopic() {
    return tr("Keyboard shortcuts");
}

HelpWindow::HelpWindow(const QString& readmePath, const QList<QPair<QString, QString>>& shortcuts,
                       QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Help"));
    setObjectName("help");
    list_ = new QListWidget;
    list_->setObjectName("helpTopics");
    browser_ = new QTextBrowser;
    browser_->setObjectName("helpText");
    browser_->setOpenLinks(
        false);  // follow() decides: a section here, a file or a web page outside
    connect(browser_, &QTextBrowser::anchorClicked, this, &HelpWindow::follow);

    QFile file(readmePath);
    if (!readmePath.isEmpty() && file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        baseDir_ = QFileInfo(readmePath).absolutePath();
        sections_ = markdownSections(QString::fromUtf8(file.readAll()), tr("Overview"));
        browser_->setSearchPaths({baseDir_});
    } else {
        HelpSection missing;
        missing.title = tr("README not found");
        missing.markdown =
            tr("## README not found\n\nThe manual is the README, installed as "
               "`share/doc/ampbench/README.md` beside the program's `bin` folder%1, and "
               "`README.md` at the top of the sources.\n")
                .arg(readmePath.isEmpty() ? QString() : tr(" (looked for: `%1`)").arg(readmePath));
        sections_ = {missing};
    }
    for (const HelpSection& s : sections_) {
        list_->addItem(s.title);
    }
    list_->addItem(shortcutsTopic());
    // The list as wide as its longest title (within reason), so none is cut.
    const int titles = list_->sizeHintForColumn(0) + 2 * list_->frameWidth() + 12;
    list_->setMinimumWidth(std::clamp(titles, 160, 340));
    list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    list_->setTextElideMode(Qt::ElideRight);

    shortcuts_ = new QTableWidget(0, 2);
    shortcuts_->setObjectName("shortcuts");
    shortcuts_->setHorizontalHeaderLabels({tr("Keys"), tr("Command")});
    shortcuts_->verticalHeader()->hide();
    shortcuts_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    shortcuts_->setWordWrap(false);
    shortcuts_->horizontalHeader()->setStretchLastSection(true);
    setShortcuts(shortcuts);

    pages_ = new QStackedWidget;
    pages_->addWidget(browser_);
    pages_->addWidget(shortcuts_);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(list_);
    split->addWidget(pages_);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    split->setSizes({list_->minimumWidth(), 900 - list_->minimumWidth()});

    auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(close);
    connect(list_, &QListWidget::currentRowChanged, this, &HelpWindow::showRow);
    list_->setCurrentRow(0);
    resize(920, 640);
}

void HelpWindow::setShortcuts(const QList<QPair<QString, QString>>& shortcuts) {
    shortcuts_->setRowCount(0);
    for (const auto& [keys, what] : shortcuts) {
        const int row = shortcuts_->rowCount();
        shortcuts_->insertRow(row);
        shortcuts_->setItem(row, 0, new QTableWidgetItem(keys));
        shortcuts_->setItem(row, 1, new QTableWidgetItem(what));
    }
    shortcuts_->resizeColumnsToContents();
}

QStringList HelpWindow::topics() const {
    QStringList out;
    for (int i = 0; i < list_->count(); ++i) {
        out << list_->item(i)->text();
    }
    return out;
}

QString HelpWindow::currentTopic() const {
    return list_->currentItem() ? list_->currentItem()->text() : QString();
}

bool HelpWindow::showTopic(const QString& topic) {
    const QString anchor = headingAnchor(topic);
    for (int i = 0; i < sections_.size(); ++i) {
        const HelpSection& s = sections_[i];
        if (s.title == topic ||
            (!anchor.isEmpty() && (s.anchor == anchor || s.inner_anchors.contains(anchor)))) {
            list_->setCurrentRow(i);
            return true;
        }
    }
    if (topic == shortcutsTopic()) {
        list_->setCurrentRow(list_->count() - 1);
        return true;
    }
    return false;
}

void HelpWindow::showRow(int row) {
    if (row < 0) {
        return;
    }
    if (row >= sections_.size()) {
        pages_->setCurrentWidget(shortcuts_);
        return;
    }
    pages_->setCurrentWidget(browser_);
    browser_->document()->setBaseUrl(QUrl::fromLocalFile(baseDir_ + '/'));
    browser_->setMarkdown(sections_[row].markdown);
    fitImages(browser_->document(), baseDir_);
    browser_->verticalScrollBar()->setValue(0);
}

void HelpWindow::follow(const QUrl& url) {
    // A link to a heading of the README ("#your-data-is-safe") shows its section.
    if (url.scheme().isEmpty() && url.path().isEmpty() && url.hasFragment()) {
        showTopic(url.fragment());
        return;
    }
    if (url.isRelative() && !baseDir_.isEmpty()) {
        QDesktopServices::openUrl(QUrl::fromLocalFile(QDir(baseDir_).filePath(url.path())));
        return;
    }
    QDesktopServices::openUrl(url);
}

}  // namespace ampbench::ui
