"""The recorder against bad input: nothing a script recorded is lost, nothing raises into
its training loop unless asked to, and what cannot be recorded is refused where it
enters, naming it.

The tests that ingest what the recorder wrote run the real `ampbench-cli` (AMPBENCH_CLI,
set by the build's test registration) and read its database back.
"""

import contextlib
import io
import json
import os
import select
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import ampbench
from ampbench import stream

try:
    import numpy
except ImportError:
    numpy = None
try:
    import torch
except ImportError:
    torch = None

CLI = os.environ.get("AMPBENCH_CLI", "")
needs_cli = unittest.skipUnless(CLI and os.access(CLI, os.X_OK),
                                "AMPBENCH_CLI does not name the built ampbench-cli")


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def of_type(records, kind):
    return [r for r in records if r["type"] == kind]


def quiet():
    """stderr captured (the recorder's one warning goes there)."""
    return contextlib.redirect_stderr(io.StringIO())


def ingest(test, folder, path):
    """`ampbench-cli ingest` of one stream file into a new database; (exit, db path, output)."""
    db = os.path.join(folder, "w.db")
    p = subprocess.run([CLI, "--db", db, "ingest", path], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, db, p.stdout + p.stderr


def count(db, table):
    with contextlib.closing(sqlite3.connect(db)) as c:
        return c.execute("SELECT COUNT(*) FROM %s" % table).fetchone()[0]


class Folder:
    def __init__(self, test):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)
        self.name = self.dir.name

    def path(self, name):
        return os.path.join(self.name, name)


class BadValuesTest(unittest.TestCase):
    def test_a_step_of_none_or_text_is_refused_at_the_call_and_every_other_step_is_kept(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rec = ampbench.Recorder(path, environ={}, arm="fp32", read_back_steps=8)
            for i in range(40):
                rec.step({19: None, 29: "abc"}.get(i, 1.0 / (i + 1)), samples=4)
            rec.close()
        records = read(path)
        steps = of_type(records, "step")
        self.assertEqual(len(steps), 38, "38 of 40: only the two bad ones are not recorded")
        self.assertEqual([s["step"] for s in steps],
                         [n for n in range(1, 41) if n not in (20, 30)],
                         "a refused step still counts: later steps keep their numbers")
        warnings = [e["message"] for e in of_type(records, "event") if e["kind"] == "warning"]
        self.assertEqual(len(warnings), 2, warnings)
        self.assertIn("step 20: loss=None is not a number", warnings[0])
        self.assertIn("step 30: loss='abc' is not a number", warnings[1])
        self.assertEqual(records[-1]["status"], "finished")
        self.assertEqual(err.getvalue().count("step 20: loss=None"), 1, "said once on stderr")
        self.assertNotIn("step 30", err.getvalue(), "later problems are counted, not printed")
        self.assertIn("2 recording problems", err.getvalue())

    @unittest.skipUnless(numpy, "numpy is not installed")
    def test_numpy_values_follow_the_rules_for_python_values(self):
        """A numpy scalar is judged as the Python value it holds: np.bool_(True) is refused
        as True is (it was stored as a loss of 1.0), np.float32(16.5) samples as 16.5 are
        (it was cut to 16), and numpy's numbers are taken as Python's."""
        d = Folder(self)
        path = d.path("s.ndjson")
        with quiet():
            rec = ampbench.Recorder(path, environ={}, arm="fp32", read_back_steps=1,
                                    read_back_ms=0)
            rec.step(numpy.bool_(True), samples=8)
            rec.step(True, samples=8)
            rec.step(1.0, samples=numpy.float32(16.5))
            rec.step(1.0, samples=16.5)
            rec.step(1.0, samples=numpy.array([8, 8]))
            rec.step(numpy.float32(0.5), samples=numpy.int64(16))
            rec.step(numpy.array(0.25), samples=numpy.float32(16.0))
            rec.eval(metric=numpy.bool_(False), loss=0.5)
            rec.eval(metric=numpy.float32(0.75), loss=numpy.float64(0.5))
            if torch is not None:
                rec.step(torch.tensor(True), samples=8)
                rec.step(1.0, samples=torch.tensor(16.5))
            rec.close()
        records = read(path)
        steps = of_type(records, "step")
        self.assertEqual([(s["step"], s["loss"], s["samples"]) for s in steps],
                         [(6, 0.5, 16), (7, 0.25, 32)])
        evals = of_type(records, "eval")
        self.assertEqual([(e["val_accuracy"], e["val_loss"]) for e in evals], [(0.75, 0.5)])
        warnings = [e["message"] for e in of_type(records, "event") if e["kind"] == "warning"]
        self.assertEqual(len(warnings), 8 if torch is not None else 6, warnings)
        for text in ("step 1: loss=", "step 2: loss=True is not a number",
                     "step 3: samples must be a whole number, not 16.5",
                     "step 4: samples must be a whole number, not 16.5",
                     "step 5: samples must be a single value, not 2 values",
                     "eval() at step 7: metric="):
            self.assertTrue(any(text in w for w in warnings), (text, warnings))
        self.assertIn("is not a number", warnings[0])
        if torch is not None:
            self.assertIn("step 8: loss=tensor(True) is not a number", warnings[6])
            self.assertIn("step 9: samples must be a whole number, not 16.5", warnings[7])

    def test_strict_raises_at_the_bad_call_and_keeps_what_came_before(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        rec = ampbench.Recorder(path, environ={"AMPBENCH_STRICT": "1"}, read_back_steps=100)
        for _ in range(5):
            rec.step(0.5, samples=1)
        with self.assertRaises(ampbench.RecorderError) as e:
            rec.step(None, samples=1)
        self.assertIn("loss=None", str(e.exception))
        rec.close()
        self.assertEqual(len(of_type(read(path), "step")), 5)

    def test_bad_evaluations_and_events_are_refused_without_raising(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        with quiet():
            rec = ampbench.Recorder(path, environ={})
            rec.step(1.0, samples=1)
            rec.eval(metric="high", loss=0.5)
            rec.eval(metric=0.5, loss=0.25)
            rec.event("note", kind="shout")
            rec.event("note", value=object())
            rec.close(status="done")
        records = read(path)
        self.assertEqual(len(of_type(records, "eval")), 1)
        self.assertEqual(of_type(records, "eval")[0]["val_accuracy"], 0.5)
        self.assertEqual(len(of_type(records, "step")), 1)
        self.assertEqual((records[-1]["status"], records[-1]["failure"]), ("failed", "recording"))
        self.assertIn("close(status='done'", records[-1]["error"])

    def test_more_problems_than_events_are_counted_in_the_run(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        with quiet():
            rec = ampbench.Recorder(path, environ={})
            for _ in range(25):
                rec.step(None, samples=1)
            rec.close()
        warnings = [e for e in of_type(read(path), "event") if e["kind"] == "warning"]
        self.assertEqual(len(warnings), ampbench.recorder.PROBLEM_EVENTS + 1)
        self.assertIn("25 recording problems in all", warnings[-1]["message"])

    @needs_cli
    def test_what_survives_a_bad_step_ingests_whole(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        with quiet():
            rec = ampbench.Recorder(path, environ={}, arm="amp", precision="amp-bf16")
            for i in range(40):
                rec.step(None if i == 7 else 2.0, samples=8)
            rec.eval(metric=0.5, loss=1.0)
            rec.close()
        code, db, out = ingest(self, d.name, path)
        self.assertEqual(code, 0, out)
        self.assertEqual(count(db, "steps"), 39)
        self.assertEqual(count(db, "evals"), 1)


class StreamFailureTest(unittest.TestCase):
    def test_a_stream_nobody_reads_any_more_never_stops_the_training_loop(self):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the first line
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rec = ampbench.Recorder(environ={"AMPBENCH_STREAM_FD": str(w)}, read_back_steps=1,
                                    read_back_ms=0)
            for _ in range(30):
                rec.step(1.0, samples=1)  # would raise before
            rec.eval(metric=0.5)
            rec.close()
        self.assertIn("could not be written (the workbench stopped reading it)", err.getvalue())
        self.assertEqual(err.getvalue().count("could not be written"), 1)

    def test_strict_raises_when_the_stream_cannot_be_written(self):
        r, w = os.pipe()
        os.close(r)
        with self.assertRaises(ampbench.RecorderError):
            ampbench.Recorder(environ={"AMPBENCH_STREAM_FD": str(w)}, strict=True)


class NameTest(unittest.TestCase):
    def test_a_100_kB_arm_name_is_refused_before_anything_is_written(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        for env, given in (({"AMPBENCH_ARM": "a" * 100000}, {}), ({}, {"arm": "b" * 100000})):
            with self.assertRaises(ampbench.RecorderError) as e:
                ampbench.Recorder(path, environ=env, **given)
            self.assertIn("at most 200 bytes long (it is 100000)", str(e.exception))
            self.assertIn("AMPBENCH_ARM", str(e.exception))
            self.assertFalse(os.path.exists(path), "nothing written, no file emptied")

    def test_control_characters_in_the_arm_or_experiment_are_refused_by_name(self):
        d = Folder(self)
        for env in ({"AMPBENCH_ARM": "fp\x1b[31m32"}, {"AMPBENCH_EXPERIMENT": "a\nb"},
                    {"AMPBENCH_EXPERIMENT": "x\x7f"}):
            with self.assertRaises(ampbench.RecorderError) as e:
                ampbench.Recorder(d.path("s.ndjson"), environ=env)
            self.assertIn("control characters", str(e.exception))
            self.assertIn(next(iter(env)), str(e.exception))

    def test_a_name_counts_bytes_not_characters(self):
        self.assertEqual(stream.name_problem("\u00e9" * 100), "")
        self.assertIn("it is 202", stream.name_problem("\u00e9" * 101))
        cut = stream.storable_name("s\u00e9" * 150)
        self.assertEqual(stream.name_problem(cut), "")
        self.assertTrue(("s\u00e9" * 150).startswith(cut))
        self.assertEqual(stream.storable_name("a\x1bb\nc"), "a b c")

    @needs_cli
    def test_the_recorder_refuses_exactly_the_names_ingest_refuses(self):
        """One rule on both sides: each name is stored by ingest iff the recorder takes it."""
        names = ["fp32", "a" * 200, "a" * 201, "\u00e9" * 100, "\u00e9" * 101, "tab\there",
                 "esc\x1b", "del\x7f", "c1\u0085ok", "\U0001F600" * 50, "\U0001F600" * 51,
                 "line\r", "sp ace", "=SUM(A1)", "not\udcffutf8"]
        for name in names:
            with self.subTest(name=name[:20]):
                d = Folder(self)
                path = d.path("s.ndjson")
                try:
                    rec = ampbench.Recorder(path, environ={}, arm=name)
                    taken = True
                    rec.step(1.0, samples=1)
                    rec.close()
                except ampbench.RecorderError:
                    taken = False
                    write_run_by_hand(path, name)
                code, db, out = ingest(self, d.name, path)
                self.assertEqual(code == 0, taken, "recorder %s, ingest said: %s"
                                 % ("took it" if taken else "refused it", out))
                if not taken:
                    self.assertIn('"arm"', out, "ingest names the field")


def write_run_by_hand(path, arm):
    """The records a recorder without the name rule would have written for `arm`."""
    env = {"os": "test"}
    records = [stream.header(env, "python-recorder test", "ab" * 16),
               {"type": "experiment", "id": 1, "name": "names", "spec_json": "{}",
                "created_at": "2026-12-04T00:00:00Z"},
               {"type": "run", "id": 1, "experiment_id": 1, "arm": arm, "arm_index": 0,
                "seed": 0, "spec_json": "{}", "env_json": json.dumps(env), "planned_steps": 0,
                "inputs_json": "", "status": "finished", "failure": "", "error": "",
                "started_at": "2026-12-04T00:00:00Z", "ended_at": "2026-12-04T00:00:01Z"},
               {"type": "status", "run": 1, "status": "finished", "failure": "", "error": "",
                "last_seq": 0}]
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(stream.encode(r) + "\n")


class DestinationTest(unittest.TestCase):
    def test_a_symbolic_link_is_refused_and_its_target_left_as_it_was(self):
        d = Folder(self)
        target = d.path("precious.txt")
        with open(target, "w") as f:
            f.write("root:x:0:0\n")
        link = d.path("s.ndjson")
        os.symlink(target, link)
        with self.assertRaises(ampbench.RecorderError) as e:
            ampbench.Recorder(environ={"AMPBENCH_STREAM": link})
        self.assertIn("symbolic link", str(e.exception))
        with open(target) as f:
            self.assertEqual(f.read(), "root:x:0:0\n")

    def test_special_files_are_refused_by_kind(self):
        with self.assertRaises(ampbench.RecorderError) as e:
            ampbench.Recorder("/dev/null", environ={})
        self.assertIn("character device", str(e.exception))
        d = Folder(self)
        with self.assertRaises(ampbench.RecorderError) as e:
            ampbench.Recorder(d.name, environ={})
        self.assertIn("a folder", str(e.exception))

    def test_a_fifo_without_a_reader_is_refused_instead_of_blocking(self):
        d = Folder(self)
        fifo = d.path("s.fifo")
        os.mkfifo(fifo)
        code = ("import ampbench\ntry:\n    ampbench.Recorder(%r, environ={}, reader_wait=0.3)\n"
                "except ampbench.RecorderError as e:\n    print(e)\n" % fifo)
        # Before, open() blocked for ever: the timeout is only the test's guard against that.
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertIn("no process reads (none opened it within 0.3 s)", p.stdout, p.stderr)
        self.assertIn("waiting up to 0.3 s for its reader", p.stderr)

    @needs_cli
    def test_a_fifo_whose_reader_is_still_starting_gets_every_step(self):
        """`ingest f & AMPBENCH_STREAM=f python3 train.py`: the recorder may open the FIFO
        before ingest does; it waits for its reader (it was refused, "no process reads",
        in 5 of 6 tries) and every step arrives."""
        d = Folder(self)
        fifo = d.path("s.fifo")
        os.mkfifo(fifo)
        code = ("import ampbench\nrec = ampbench.Recorder()\nfor i in range(30):\n"
                "    rec.step(1.0 / (i + 1), samples=4)\nrec.close()\n")
        writer = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE,
                                  text=True, env=dict(os.environ, AMPBENCH_STREAM=fifo,
                                                      PYTHONPATH=os.pathsep.join(sys.path)))
        self.addCleanup(writer.kill)
        # The reader starts only once the recorder is waiting for it.
        said = writer.stderr.readline()
        self.assertIn("waiting up to 10 s for its reader", said)
        db = os.path.join(d.name, "w.db")
        reader = subprocess.run([CLI, "--db", db, "ingest", fifo], capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(writer.wait(timeout=120), 0, writer.stderr.read())
        self.assertEqual(reader.returncode, 0, reader.stdout + reader.stderr)
        self.assertEqual(count(db, "steps"), 30)

    def test_a_fifo_with_a_reader_gets_the_whole_stream(self):
        d = Folder(self)
        fifo = d.path("s.fifo")
        os.mkfifo(fifo)
        got = []
        opened = threading.Event()

        def reader():
            # Open before the writer (so it finds a reader), then read until its status
            # line: with no writer yet a read gives nothing, not the end.
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            opened.set()
            data = b""
            deadline = time.monotonic() + 120
            while b'"type":"status"' not in data and time.monotonic() < deadline:
                select.select([fd], [], [], 0.1)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    chunk = b""
                data += chunk
                if not chunk:
                    time.sleep(0.01)
            os.close(fd)
            got.extend(json.loads(line) for line in data.decode("utf-8").splitlines())

        t = threading.Thread(target=reader)
        t.start()
        self.assertTrue(opened.wait(60))
        rec = ampbench.Recorder(fifo, environ={})
        rec.step(1.0, samples=1)
        rec.close()
        t.join(60)
        self.assertEqual([r["type"] for r in got][-2:], ["run", "status"])

    def test_a_second_recorder_on_the_same_file_is_refused_and_the_first_keeps_every_line(self):
        d = Folder(self)
        path = d.path("s.ndjson")
        first = ampbench.Recorder(path, environ={}, read_back_steps=1, read_back_ms=0)
        for _ in range(10):
            first.step(1.0, samples=1)
        with self.assertRaises(ampbench.RecorderError) as e:
            ampbench.Recorder(path, environ={})
        self.assertIn("another recorder", str(e.exception))
        code = "import ampbench\nampbench.Recorder(%r, environ={})\n" % path
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("another recorder", p.stderr, "another process is refused too")
        for _ in range(10):
            first.step(1.0, samples=1)
        first.close()
        self.assertEqual(len(of_type(read(path), "step")), 20)
        again = ampbench.Recorder(path, environ={})  # the lock ends with its writer
        again.close()


if __name__ == "__main__":
    unittest.main()
