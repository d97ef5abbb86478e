#pragma once
// A line of grey text in the middle of an item view while it has no rows: why it is
// empty and what fills it, where a blank table said nothing.
#include <QObject>
#include <QString>

class QAbstractItemView;

namespace ampbench::ui {

/// Draws its text over `view`'s viewport whenever the view's model (the one set when
/// installed) has no rows, and repaints as rows come and go. Owned by the view; GUI
/// thread only.
class EmptyViewNote : public QObject {
    Q_OBJECT
  public:
    /// Puts `text` on `view` while it is empty.
    static EmptyViewNote* install(QAbstractItemView* view, const QString& text);
    void setText(const QString& text);
    QString text() const { return text_; }
    /// Whether the view shows the note now (its model has no rows).
    bool isShown() const;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    EmptyViewNote(QAbstractItemView* view, const QString& text);
    void watchModel();
    QAbstractItemView* view_;
    QString text_;
};

}  // namespace ampbench::ui
