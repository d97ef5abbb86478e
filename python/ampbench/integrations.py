"""Callbacks for Lightning and Hugging Face's Trainer, written against their public
APIs. Nothing here is imported by `import ampbench`: each factory imports its library
when called.
"""

from ampbench.recorder import Recorder

__all__ = ["lightning_callback", "hf_callback"]


def _batch_size(batch):
    """Samples in a batch of tensors (a tensor, or a tuple/list/dict of them); None if unknown."""
    if hasattr(batch, "shape") and len(batch.shape) > 0:
        return int(batch.shape[0])
    if isinstance(batch, (list, tuple)) and batch:
        return _batch_size(batch[0])
    if isinstance(batch, dict) and batch:
        return _batch_size(next(iter(batch.values())))
    return None


def _first(mapping, names):
    for name in names:
        if name in mapping:
            return mapping[name]
    return None


def lightning_callback(recorder=None):
    """A lightning.pytorch (or pytorch_lightning) Callback recording each optimizer step
    and each validation through `recorder` (default: a new Recorder)."""
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback  # the package's older name

    class AmpbenchCallback(Callback):
        def __init__(self, rec):
            super().__init__()
            self.rec = rec
            self._step = 0
            self._samples = 0

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            n = _batch_size(batch)
            self._samples += n or 0
            if trainer.global_step == self._step:
                return  # accumulating: the optimizer has not stepped yet
            self._step = trainer.global_step
            loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
            if loss is None:
                loss = trainer.callback_metrics.get("train_loss", float("nan"))
            lr = None
            if trainer.optimizers:
                lr = trainer.optimizers[0].param_groups[0]["lr"]
            scaler = getattr(getattr(trainer, "precision_plugin", None), "scaler", None)
            self.rec.step(loss, lr=lr, scaler=scaler,
                          samples=self._samples if n is not None else None)
            self._samples = 0

        def on_validation_end(self, trainer, pl_module):
            if getattr(trainer, "sanity_checking", False):
                return
            m = trainer.callback_metrics
            metric = _first(m, ("val_acc", "val_accuracy", "accuracy"))
            loss = _first(m, ("val_loss", "loss"))
            self.rec.eval(metric=metric, loss=loss)

        def on_fit_end(self, trainer, pl_module):
            # Not closed: trainer.validate() or test() may follow; the recorder closes
            # the run when the script ends (or rec.close() does).
            self.rec.flush()

        def on_exception(self, trainer, pl_module, exception):
            self.rec._close_for(type(exception), exception)

    return AmpbenchCallback(recorder or Recorder())


def hf_callback(recorder=None):
    """A transformers TrainerCallback recording what the Trainer logs (set logging_steps=1
    for a row per optimizer step) and each evaluation."""
    from transformers import TrainerCallback

    class AmpbenchCallback(TrainerCallback):
        def __init__(self, rec):
            self.rec = rec
            self._logged_step = 0

        def on_log(self, args, state, control, logs=None, **kwargs):
            logs = logs or {}
            if "loss" not in logs or state.global_step <= self._logged_step:
                return
            steps = state.global_step - self._logged_step
            self._logged_step = state.global_step
            per_step = (args.per_device_train_batch_size * args.gradient_accumulation_steps *
                        max(1, args.world_size))
            self.rec.step(logs["loss"], lr=logs.get("learning_rate"), samples=per_step * steps)

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            metrics = metrics or {}
            self.rec.eval(metric=_first(metrics, ("eval_accuracy", "eval_acc")),
                          loss=metrics.get("eval_loss"))

        def on_train_end(self, args, state, control, **kwargs):
            # Not closed: trainer.evaluate() often follows; the recorder closes the run
            # when the script ends (or rec.close() does).
            self.rec.flush()

    return AmpbenchCallback(recorder or Recorder())
