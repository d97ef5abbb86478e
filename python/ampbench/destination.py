"""Opening the file a record stream goes to, as safely as the workbench writes its own.

A stream file is written as the script trains, so it cannot be replaced whole the way the
CLI replaces an output file. Instead: a symbolic link is refused (writing through it
would replace whatever it points at), and so is every special file but a FIFO that a
reader opens within READER_WAIT_S (a reader started just before the script, as in
`ampbench-cli ingest f & python3 train.py`, may open it a moment later; a FIFO nobody
reads would block the script forever). The file is locked while it is written: a second
recorder on the same file is refused before it truncates a line of the first one's.
"""

import errno
import fcntl
import os
import stat
import time

#: How long a FIFO may wait for its reader to open it before the stream is refused.
READER_WAIT_S = 10.0


class DestinationError(OSError):
    """The stream file cannot be written; the message says why and what to do."""


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
)


def _kind(mode):
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def _open_for_writing(name, reader_wait, waiting):
    """A descriptor of `name` for writing, not following a link, without blocking."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    until = time.monotonic() + max(0.0, float(reader_wait))
    told = False
    while True:
        try:
            return os.open(name, flags, 0o666)
        except OSError as e:
            error = e
        # ENXIO: a FIFO that no process reads yet; its reader may still be starting.
        if error.errno != errno.ENXIO or time.monotonic() >= until:
            break
        if not told and waiting is not None:
            waiting("%s is a FIFO (named pipe) that no process reads yet; waiting up to %g s "
                    "for its reader" % (name, reader_wait))
            told = True
        time.sleep(0.05)
    if error.errno == errno.ENXIO:
        raise DestinationError("%s is a FIFO (named pipe) that no process reads (none opened it "
                               "within %g s); start its reader first (writing would block)"
                               % (name, reader_wait)) from None
    if error.errno == errno.ELOOP:
        raise DestinationError("%s is a symbolic link; the record stream is not written "
                               "through links: name the file itself" % name) from None
    raise DestinationError("cannot write the record stream to %s: %s"
                           % (name, error.strerror)) from None


def open_stream_file(path, reader_wait=READER_WAIT_S, waiting=None):
    """An unbuffered binary file for `path`, locked for this writer alone, emptied.

    A FIFO that no process reads yet is opened again every 50 ms for `reader_wait`
    seconds; `waiting(message)` hears once that it waits."""
    name = os.fspath(path)
    try:
        found = os.lstat(name)
    except FileNotFoundError:
        found = None
    except OSError as e:
        raise DestinationError("%s: %s" % (name, e.strerror)) from None
    if found is not None and stat.S_ISLNK(found.st_mode):
        raise DestinationError(
            "%s is a symbolic link; the record stream is not written through links (its "
            "target would be replaced): name the file itself" % name)
    if found is not None and not stat.S_ISREG(found.st_mode) and not stat.S_ISFIFO(found.st_mode):
        raise DestinationError("%s is %s, not a file the record stream can be written to"
                               % (name, _kind(found.st_mode)))
    fd = _open_for_writing(name, reader_wait, waiting)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DestinationError(
                    "%s is being written by another recorder; two runs cannot share one "
                    "record stream file: give each its own (AMPBENCH_STREAM or "
                    "Recorder(path))" % name) from None
            os.ftruncate(fd, 0)
        elif not stat.S_ISFIFO(mode):
            raise DestinationError("%s is %s, not a file the record stream can be written to"
                                   % (name, _kind(mode)))
        # Writes block again once the file is ours (a FIFO's reader may fall behind).
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "wb", buffering=0, closefd=True)
    except BaseException:
        os.close(fd)
        raise
