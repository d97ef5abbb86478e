"""Unit tests of the ampbench recorder: python3 -m unittest discover -s tests/python.

The stream's lines are held to the C++ reader's schema (core/stream/RecordStream.cpp):
every field of a step, evaluation, event and status record, exact doubles, NaN and the
infinities as strings, run-scoped sequence numbers. Tests that need PyTorch skip, with
a message, only where it is not installed.
"""

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import types
import unittest

import ampbench
from ampbench import stream
from ampbench.settings import ArmSettings, SettingsError

try:
    import torch
except ImportError:  # pragma: no cover - CI installs python3-torch
    torch = None

needs_torch = unittest.skipUnless(torch is not None, "python3-torch is not installed")

STEP_FIELDS = {"type", "run", "seq", "step", "samples", "loss", "lr", "loss_scale", "skipped",
               "grad_norm", "step_ms", "data_wait_ms", "timed", "mem_allocated", "mem_reserved",
               "mem_peak", "wall_s"}
EVAL_FIELDS = {"type", "run", "seq", "step", "samples", "val_loss", "val_accuracy", "wall_s"}
EVENT_FIELDS = {"type", "run", "seq", "step", "kind", "message", "value"}
STATUS_FIELDS = {"type", "run", "status", "failure", "error", "last_seq"}
DOUBLE_FIELDS = {"loss", "lr", "loss_scale", "grad_norm", "step_ms", "data_wait_ms", "wall_s",
                 "val_loss", "val_accuracy", "value"}


def as_double(v):
    """A double field as the C++ reader reads it."""
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
    assert isinstance(v, (int, float)) and not isinstance(v, bool), v
    return float(v)


class StreamFile:
    """A Recorder writing to a temporary file, and the records read back."""

    def __init__(self, test, env=None, **kwargs):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)
        self.path = os.path.join(self.dir.name, "s.ndjson")
        self.rec = ampbench.Recorder(self.path, environ=env or {}, **kwargs)
        test.addCleanup(self.rec.close)

    def records(self):
        with open(self.path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]


def held_to_schema(test, records):
    """Every record has exactly the fields the C++ reader reads, of their types."""
    test.assertEqual(records[0]["type"], "header")
    test.assertEqual(records[0]["stream_version"], 1)
    seqs = []
    for r in records:
        fields = {"step": STEP_FIELDS, "eval": EVAL_FIELDS, "event": EVENT_FIELDS,
                  "status": STATUS_FIELDS}.get(r["type"])
        if fields is None:
            continue
        test.assertEqual(set(r), fields, r)
        for k, v in r.items():
            if k in DOUBLE_FIELDS:
                as_double(v)
            elif k in ("skipped", "timed"):
                test.assertIsInstance(v, bool)
            elif k not in ("type", "kind", "message", "status", "failure", "error"):
                test.assertIsInstance(v, int, k)
                test.assertNotIsInstance(v, bool, k)
        if "seq" in r:
            seqs.append(r["seq"])
    test.assertEqual(seqs, list(range(1, len(seqs) + 1)), "run-scoped seq 1, 2, 3 ...")
    return seqs


class EncodingTest(unittest.TestCase):
    def test_doubles_are_written_so_that_they_read_back_to_the_same_bits(self):
        for v in (1 / 3, 0.1, 5e-324, 1.7976931348623157e308, -0.0, 2.0 ** -1074, 123456789.125):
            line = stream.encode({"type": "step", "loss": stream.number(v)})
            back = json.loads(line)["loss"]
            self.assertEqual(math.copysign(1, back) if back == 0 else back,
                             math.copysign(1, v) if v == 0 else v)
            self.assertEqual(float(back).hex(), v.hex())

    def test_nan_and_the_infinities_are_the_strings_the_format_names(self):
        self.assertEqual(stream.number(math.nan), "NaN")
        self.assertEqual(stream.number(math.inf), "Infinity")
        self.assertEqual(stream.number(-math.inf), "-Infinity")
        self.assertNotIn("NaN,", stream.encode({"x": stream.number(math.nan)}).replace('"NaN"', ""))

    def test_a_bare_nan_is_never_written(self):
        with self.assertRaises(ValueError):
            stream.encode({"loss": math.nan})

    def test_whole_numbers_refuse_bools_fractions_and_values_past_int64(self):
        self.assertEqual(stream.whole(3.0, "samples"), 3)
        for bad in (True, 2.5, 2 ** 63, "x"):
            with self.assertRaises(ValueError) as e:
                stream.whole(bad, "samples")
            self.assertIn("samples", str(e.exception))


class RecorderTest(unittest.TestCase):
    def test_a_run_of_its_own_has_header_experiment_run_rows_and_status_in_order(self):
        s = StreamFile(self, arm="bf16", seed=4, precision="amp-bf16", accumulation=2, lr=0.2,
                       warmup_steps=1, micro_batch=8)
        s.rec.step(2.5)
        s.rec.step(2.25, samples=10)
        s.rec.eval(metric=0.75, loss=1.5)
        s.rec.event("note", kind="warning", value=3)
        s.rec.close()
        records = s.records()
        self.assertEqual([r["type"] for r in records],
                         ["header", "experiment", "run", "step", "step", "eval", "event", "run",
                          "status"])
        held_to_schema(self, records)
        run = records[2]
        self.assertEqual((run["arm"], run["seed"], run["status"]), ("bf16", 4, "running"))
        self.assertEqual(json.loads(run["spec_json"])["resolved_precision"], "amp-bf16")
        self.assertEqual(records[7]["status"], "finished")
        self.assertNotEqual(records[7]["ended_at"], "")
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([r["samples"] for r in steps], [16, 26], "default: micro-batch x K")
        self.assertEqual([r["lr"] for r in steps], [0.2, 0.2])
        self.assertEqual([r["timed"] for r in steps], [False, True])
        self.assertEqual(records[-1], {"type": "status", "run": 1, "status": "finished",
                                       "failure": "", "error": "", "last_seq": 4})
        self.assertEqual(len(records[0]["database_id"]), 32)

    def test_under_the_workbench_it_records_into_the_planned_run_only(self):
        r, w = os.pipe()
        env = {"AMPBENCH_STREAM_FD": str(w), "AMPBENCH_RUN_ID": "42", "AMPBENCH_ARM": "amp",
               "AMPBENCH_SEED": "3", "AMPBENCH_PRECISION": "amp-fp16",
               "AMPBENCH_ACCUMULATION": "4", "AMPBENCH_LR": "0.4", "AMPBENCH_MICRO_BATCH": "2",
               "AMPBENCH_WARMUP_STEPS": "0"}
        rec = ampbench.Recorder(environ=env)
        self.assertEqual((rec.seed, rec.accumulation, rec.lr), (3, 4, 0.4))
        self.assertEqual(rec.settings.effective_batch, 8)
        rec.step(1.0)
        rec.close()
        with os.fdopen(r, encoding="utf-8") as f:
            records = [json.loads(line) for line in f]
        self.assertEqual([x["type"] for x in records], ["header", "step", "status"])
        self.assertNotIn("database_id", records[0])
        self.assertEqual({x["run"] for x in records[1:]}, {42})
        self.assertEqual(records[1]["samples"], 8)
        self.assertTrue(records[1]["timed"])

    def test_steps_are_written_in_batches_not_one_by_one(self):
        s = StreamFile(self, read_back_steps=5, read_back_ms=0)
        for i in range(4):
            s.rec.step(1.0, samples=1)
        self.assertEqual([r["type"] for r in s.records()][3:], [], "held until the 5th")
        s.rec.step(1.0, samples=1)
        self.assertEqual(len([r for r in s.records() if r["type"] == "step"]), 5)

    def test_an_exception_that_ends_the_script_closes_the_run_failed_with_its_text(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.ndjson")
            code = ("import ampbench\nrec = ampbench.Recorder(%r)\nrec.step(1.0, samples=1)\n"
                    "raise KeyError('batch')\n" % path)
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("KeyError", p.stderr, "the traceback is still printed")
            with open(path, encoding="utf-8") as f:
                last = json.loads(f.read().splitlines()[-1])
        self.assertEqual((last["type"], last["status"], last["failure"]),
                         ("status", "failed", "runtime"))
        self.assertEqual(last["error"], "KeyError: 'batch'")
        self.assertEqual(last["last_seq"], 1)

    def test_a_script_that_forgets_close_is_closed_finished_at_exit(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.ndjson")
            code = "import ampbench\nrec = ampbench.Recorder(%r)\nrec.step(1.0, samples=1)\n" % path
            subprocess.run([sys.executable, "-c", code], check=True,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            with open(path, encoding="utf-8") as f:
                records = [json.loads(line) for line in f]
        self.assertEqual([r["type"] for r in records][-3:], ["step", "run", "status"])
        self.assertEqual(records[-1]["status"], "finished")

    def test_without_a_destination_it_records_nothing_and_says_so(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rec = ampbench.Recorder(environ={})
        rec.step(1.0, samples=1)
        rec.eval(metric=0.5)
        rec.close()
        self.assertIn("recording nothing", err.getvalue())

    def test_bad_settings_and_calls_are_refused_by_name(self):
        with self.assertRaises(SettingsError) as e:
            ArmSettings.from_environment({"AMPBENCH_ACCUMULATION": "two"})
        self.assertIn("AMPBENCH_ACCUMULATION", str(e.exception))
        with self.assertRaises(SettingsError) as e:
            ArmSettings.from_environment({"AMPBENCH_PRECISION": "fp8"})
        self.assertIn("fp8", str(e.exception))
        with self.assertRaises(SettingsError):
            ArmSettings.from_environment({"AMPBENCH_SEED": "-1"})
        s = StreamFile(self, strict=True)
        with self.assertRaises(ampbench.RecorderError) as e:
            s.rec.event("x", kind="shout")
        self.assertIn("info", str(e.exception))
        with self.assertRaises(ampbench.RecorderError) as e:
            s.rec.step(1.0, samples=-1)
        self.assertIn("samples", str(e.exception))
        s.rec.close()
        with self.assertRaises(ampbench.RecorderError):
            s.rec.step(1.0)

    def test_cpu_memory_is_the_resident_set_and_its_peak(self):
        s = StreamFile(self, read_back_ms=0)
        s.rec.step(1.0, samples=1)
        s.rec.close()
        step = [r for r in s.records() if r["type"] == "step"][0]
        self.assertGreater(step["mem_allocated"], 0)
        self.assertGreaterEqual(step["mem_peak"], step["mem_allocated"])

    def test_the_accumulation_boundary_is_every_kth_micro_batch(self):
        s = StreamFile(self, accumulation=3)
        self.assertEqual([s.rec.accumulation_boundary(i) for i in range(6)],
                         [False, False, True, False, False, True])

    def test_importing_the_package_imports_neither_torch_nor_a_training_library(self):
        code = ("import sys, ampbench\n"
                "bad = [m for m in ('torch', 'lightning', 'pytorch_lightning', 'transformers')"
                " if m in sys.modules]\nprint(bad)\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(p.stdout.strip(), "[]")


@needs_torch
class TorchTest(unittest.TestCase):
    def test_tensor_losses_stay_on_the_device_until_read_back_and_come_back_exact(self):
        s = StreamFile(self, read_back_steps=3, read_back_ms=0)
        values = [torch.tensor(1 / 3, dtype=torch.float64), torch.tensor(0.1),
                  torch.tensor(float("nan"))]
        for v in values:
            s.rec.step(v, samples=1, grad_norm=v * 2)
        steps = [r for r in s.records() if r["type"] == "step"]
        self.assertEqual(steps[0]["loss"], 1 / 3)
        self.assertEqual(steps[1]["loss"], float(torch.tensor(0.1)))
        self.assertEqual(steps[2]["loss"], "NaN")
        self.assertEqual(steps[0]["grad_norm"], 2 / 3)

    def test_a_loss_of_more_than_one_value_is_refused(self):
        s = StreamFile(self, strict=True)
        with self.assertRaises(ampbench.RecorderError) as e:
            s.rec.step(torch.ones(3))
        self.assertIn("(3,)", str(e.exception))

    def test_the_arms_autocast_runs_the_forward_pass_in_bf16_and_fp32_in_fp32(self):
        x = torch.randn(4, 8)
        layer = torch.nn.Linear(8, 2)
        bf16 = StreamFile(self, precision="amp-bf16", device="cpu")
        with bf16.rec.autocast():
            self.assertEqual(layer(x).dtype, torch.bfloat16)
        fp32 = StreamFile(self, precision="fp32", device="cpu")
        with fp32.rec.autocast():
            self.assertEqual(layer(x).dtype, torch.float32)
        self.assertIsNone(bf16.rec.grad_scaler(), "bf16 needs no loss scaling")
        self.assertIsNone(fp32.rec.grad_scaler())

    def test_an_fp16_arm_gets_a_scaler_with_the_arms_settings(self):
        from unittest import mock

        s = StreamFile(self, precision="amp-fp16", scaler={"init_scale": 1024.0,
                                                            "growth_interval": 7})
        with mock.patch.object(torch.cuda.amp, "GradScaler") as made:
            scaler = s.rec.grad_scaler()
        self.assertIs(scaler, made.return_value)
        made.assert_called_once_with(init_scale=1024.0, growth_interval=7)
        off = StreamFile(self, precision="amp-fp16", loss_scaling=False)
        self.assertIsNone(off.rec.grad_scaler(), "an arm without loss scaling gets none")

    def test_the_scalers_scale_and_skipped_steps_are_read_without_changing_it(self):
        class Scaler:
            """Stands in for an enabled GradScaler: its scale tensor, as update() leaves it."""

            def __init__(self):
                self._init_scale = 8.0
                self._scale = torch.tensor([8.0])

            def is_enabled(self):
                return True

        scaler = Scaler()
        s = StreamFile(self, read_back_ms=0)
        s.rec.step(1.0, samples=1, scaler=scaler)   # no overflow: 8 stays 8
        scaler._scale.fill_(4.0)                     # overflow: backed off to 4
        s.rec.step(1.0, samples=1, scaler=scaler)
        scaler._scale.fill_(8.0)                     # grew again
        s.rec.step(1.0, samples=1, scaler=scaler)
        s.rec.close()
        records = s.records()
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([r["loss_scale"] for r in steps], [8.0, 8.0, 4.0])
        self.assertEqual([r["skipped"] for r in steps], [False, True, False])
        skips = [r for r in records if r["type"] == "event"]
        self.assertEqual([(e["kind"], e["step"], e["value"]) for e in skips],
                         [("skipped_step", 2, 4.0)])
        self.assertEqual(scaler._scale.item(), 8.0, "the recorder never changes the scale")
        held_to_schema(self, records)


class IntegrationTest(unittest.TestCase):
    """The callbacks against stand-ins of the libraries' public classes (the libraries
    themselves are tested where installed, below)."""

    def _with_module(self, name, **attrs):
        parts = name.split(".")
        saved = {}
        for i in range(len(parts)):
            mod_name = ".".join(parts[:i + 1])
            saved[mod_name] = sys.modules.get(mod_name)
            mod = types.ModuleType(mod_name)
            if i == len(parts) - 1:
                for k, v in attrs.items():
                    setattr(mod, k, v)
            sys.modules[mod_name] = mod

        def restore():
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v

        self.addCleanup(restore)

    def test_the_lightning_callback_records_one_row_per_optimizer_step(self):
        if "lightning" in sys.modules or _installed("lightning"):
            self.skipTest("Lightning itself is installed: tested below")
        self._with_module("lightning.pytorch", Callback=object)
        s = StreamFile(self, read_back_ms=0)
        cb = ampbench.lightning_callback(s.rec)
        trainer = types.SimpleNamespace(global_step=0, optimizers=[
            types.SimpleNamespace(param_groups=[{"lr": 0.5}])], callback_metrics={},
            precision_plugin=None, sanity_checking=False)
        for batch_idx in range(4):  # K = 2: the step advances every other batch
            trainer.global_step = (batch_idx + 1) // 2
            batch = (types.SimpleNamespace(shape=(3, 28, 28)), types.SimpleNamespace(shape=(3,)))
            cb.on_train_batch_end(trainer, None, {"loss": 0.25 * batch_idx}, batch, batch_idx)
        trainer.callback_metrics = {"val_acc": 0.5, "val_loss": 1.25}
        cb.on_validation_end(trainer, None)
        cb.on_fit_end(trainer, None)
        s.rec.close()
        records = s.records()
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([(r["step"], r["samples"], r["loss"], r["lr"]) for r in steps],
                         [(1, 6, 0.25, 0.5), (2, 12, 0.75, 0.5)])
        ev = [r for r in records if r["type"] == "eval"][0]
        self.assertEqual((ev["val_accuracy"], ev["val_loss"]), (0.5, 1.25))
        self.assertEqual(records[-1]["status"], "finished")

    def test_the_hugging_face_callback_records_what_the_trainer_logs(self):
        if _installed("transformers"):
            self.skipTest("transformers itself is installed: tested below")
        self._with_module("transformers", TrainerCallback=object)
        s = StreamFile(self, read_back_ms=0)
        cb = ampbench.hf_callback(s.rec)
        args = types.SimpleNamespace(per_device_train_batch_size=4, gradient_accumulation_steps=2,
                                     world_size=1)
        for step in (1, 2):
            cb.on_log(args, types.SimpleNamespace(global_step=step), None,
                      logs={"loss": 1.0 / step, "learning_rate": 0.001})
        cb.on_log(args, types.SimpleNamespace(global_step=2), None, logs={"eval_loss": 3.0})
        cb.on_evaluate(args, None, None, metrics={"eval_loss": 0.5, "eval_accuracy": 0.875})
        cb.on_train_end(args, None, None)
        s.rec.close()
        records = s.records()
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([(r["samples"], r["loss"], r["lr"]) for r in steps],
                         [(8, 1.0, 0.001), (16, 0.5, 0.001)])
        ev = [r for r in records if r["type"] == "eval"][0]
        self.assertEqual((ev["val_accuracy"], ev["val_loss"]), (0.875, 0.5))


def _installed(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@unittest.skipUnless(_installed("transformers"), "transformers is not installed: its callback "
                     "was tested against a stand-in of TrainerCallback only")
class RealHuggingFaceTest(unittest.TestCase):
    def test_the_callback_is_a_trainer_callback(self):
        from transformers import TrainerCallback

        s = StreamFile(self)
        self.assertIsInstance(ampbench.hf_callback(s.rec), TrainerCallback)

    @needs_torch
    def test_a_trainer_with_the_callback_records_every_step_and_its_evaluation(self):
        from transformers import Trainer, TrainingArguments

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 2)

            def forward(self, x, labels=None):
                logits = self.layer(x)
                return {"loss": torch.nn.functional.cross_entropy(logits, labels),
                        "logits": logits}

        data = [{"x": torch.randn(4), "labels": torch.tensor(i % 2)} for i in range(16)]
        s = StreamFile(self, read_back_ms=0)
        with tempfile.TemporaryDirectory() as out:
            args = TrainingArguments(output_dir=out, max_steps=4, per_device_train_batch_size=2,
                                     gradient_accumulation_steps=2, logging_steps=1,
                                     report_to=[], save_strategy="no", use_cpu=True)
            trainer = Trainer(model=Net(), args=args, train_dataset=data, eval_dataset=data,
                              callbacks=[ampbench.hf_callback(s.rec)])
            trainer.train()
            trainer.evaluate()  # after training: still recorded
        s.rec.close()
        records = s.records()
        self.assertEqual(len([r for r in records if r["type"] == "eval"]), 1)
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([r["samples"] for r in steps], [4, 8, 12, 16])
        self.assertTrue(all(isinstance(as_double(r["loss"]), float) for r in steps))
        held_to_schema(self, records)


@unittest.skipUnless(_installed("lightning") or _installed("pytorch_lightning"),
                     "Lightning is not installed: its callback was tested against a stand-in of "
                     "Callback only")
class RealLightningTest(unittest.TestCase):
    def test_the_callback_is_a_lightning_callback(self):
        try:
            from lightning.pytorch import Callback
        except ImportError:
            from pytorch_lightning import Callback
        s = StreamFile(self)
        self.assertIsInstance(ampbench.lightning_callback(s.rec), Callback)

    @needs_torch
    def test_a_fit_with_the_callback_records_one_row_per_optimizer_step(self):
        try:
            import lightning.pytorch as pl
        except ImportError:
            import pytorch_lightning as pl

        class Net(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 2)

            def training_step(self, batch, batch_idx):
                x, y = batch
                return torch.nn.functional.cross_entropy(self.layer(x), y)

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.log("val_loss", torch.nn.functional.cross_entropy(self.layer(x), y))

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.125)

        ds = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.arange(16) % 2)
        loader = torch.utils.data.DataLoader(ds, batch_size=2)
        s = StreamFile(self, read_back_ms=0)
        with tempfile.TemporaryDirectory() as out:
            trainer = pl.Trainer(max_steps=3, accumulate_grad_batches=2, accelerator="cpu",
                                 logger=False, enable_checkpointing=False, default_root_dir=out,
                                 enable_progress_bar=False, num_sanity_val_steps=0,
                                 callbacks=[ampbench.lightning_callback(s.rec)])
            net = Net()
            trainer.fit(net, loader, loader)
            trainer.validate(net, dataloaders=loader)  # after fit: still recorded
        s.rec.close()
        records = s.records()
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual([(r["step"], r["samples"], r["lr"]) for r in steps],
                         [(1, 4, 0.125), (2, 8, 0.125), (3, 12, 0.125)])
        self.assertGreaterEqual(len([r for r in records if r["type"] == "eval"]), 1)
        self.assertEqual(records[-1]["status"], "finished")
        held_to_schema(self, records)


@unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device here")
class CudaTest(unittest.TestCase):
    def test_fp16_steps_are_timed_by_cuda_events_without_a_host_sync_per_step(self):
        s = StreamFile(self, precision="amp-fp16", device="cuda:0", read_back_steps=10,
                       read_back_ms=0, warmup_steps=2)
        model = torch.nn.Linear(256, 256).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = s.rec.grad_scaler()
        x = torch.randn(64, 256, device="cuda")
        torch.cuda.reset_peak_memory_stats()
        for i in range(25):
            with s.rec.autocast():
                loss = model(x).float().pow(2).mean()
            if i == 12:
                loss = loss * float("inf")  # an overflow: the scaler skips and backs off
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            torch.cuda.set_sync_debug_mode("error")  # a synchronising call raises
            try:
                if (i + 1) % 10:
                    s.rec.step(loss, scaler=scaler, samples=64)
                else:
                    torch.cuda.set_sync_debug_mode(0)  # the batch's read-back syncs, once
                    s.rec.step(loss, scaler=scaler, samples=64)
            finally:
                torch.cuda.set_sync_debug_mode(0)
        s.rec.close()
        records = s.records()
        held_to_schema(self, records)
        steps = [r for r in records if r["type"] == "step"]
        self.assertEqual(len(steps), 25)
        self.assertTrue(all(as_double(r["step_ms"]) > 0 for r in steps[1:]))
        self.assertTrue(all(r["mem_peak"] >= r["mem_allocated"] > 0 for r in steps))
        self.assertEqual(steps[0]["loss_scale"], 65536.0)
        self.assertTrue(steps[12]["skipped"])
        self.assertEqual(as_double(steps[13]["loss_scale"]), 32768.0)
        self.assertEqual(sum(r["skipped"] for r in steps), 1)
        skips = [r for r in records if r["type"] == "event" and r["kind"] == "skipped_step"]
        self.assertEqual([e["step"] for e in skips], [13])
        self.assertEqual(records[0]["environment"]["device"], "cuda:0")


if __name__ == "__main__":
    unittest.main()
