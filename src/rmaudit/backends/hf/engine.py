"""Running many model inputs through one model: token-budget batches, a background thread
that tokenises and pads the next batches while the model runs the current one, and an
out-of-memory back-off that halves the budget and retries instead of failing the run.

The model's thread never waits on Python between batches: inputs arrive as pinned host
tensors, are copied without blocking, and each batch's outputs stay on the device until
the whole call is done, when they come back in one copy.  Outputs are recorded only for
batches whose forward pass returned, so a batch that ran out of memory is recomputed
whole, in smaller batches, and every input's output is kept exactly once.  A call the run
asked to stop (:mod:`rmaudit.components.stopping`) ends before its next batch.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
from collections.abc import Callable, Generator, Iterator, Sequence

import numpy as np
import torch

from rmaudit.backends.hf import inputs
from rmaudit.backends.hf.batching import stream_buckets
from rmaudit.components.stopping import raise_if_stopped
from rmaudit.errors import BadInput

logger = logging.getLogger(__name__)

#: Inputs tokenised per call of the encoder: large enough for a tokenizer's batched call to
#: pay off, small enough that the first batch is ready soon.
ENCODE_GROUP = 64


@dataclasses.dataclass(frozen=True)
class Limits:
    """How inputs are cut into batches (see :mod:`rmaudit.backends.hf.batching`)."""

    batch_size: int | None  # most rows; None: the token budget alone
    max_tokens: int | None  # most tokens computed per batch; None: no budget
    pad_multiple: int = 1
    packed: bool = False


@dataclasses.dataclass
class EngineStats:
    """What the report says about the batching so far."""

    shapes: set[tuple[int, ...]] = dataclasses.field(default_factory=set)
    oom_backoffs: int = 0


def is_out_of_memory(error: BaseException) -> bool:
    # CUDA raises torch.OutOfMemoryError; MPS a RuntimeError saying so
    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "out of memory" in str(error)
    )


#: encode(item indices) -> their rows; forward(batch, device tensors) -> outputs of the
#: batch's read positions in order (first dimension = len(batch index))
Encode = Callable[[list[int]], list[inputs.ModelInput]]
Forward = Callable[[inputs.Batch, dict[str, torch.Tensor]], torch.Tensor]


class Engine:
    """Runs items through ``forward`` in batches cut by ``limits``; one per model and
    batching setup, so a budget halved after an out-of-memory error stays halved."""

    def __init__(
        self,
        device: torch.device,
        limits: Limits,
        *,
        pad_id: int | Callable,
        read_positions: Callable[[inputs.ModelInput], Sequence[int]],
        prefetch: int = 2,
    ) -> None:
        self.device = device
        self.limits = limits
        self.pad_id = pad_id  # an id, or rows -> id (chosen per batch)
        self.read_positions = read_positions
        self.prefetch = prefetch
        self.stats = EngineStats()

    def run(self, order: Sequence[int], encode: Encode, forward: Forward) -> dict[int, np.ndarray]:
        """Outputs of each item (as float64 arrays, first dimension = its read positions);
        ``order``: the items, longest (estimated) first, as the encoder should take them."""
        rows: dict[int, inputs.ModelInput] = {}
        done: dict[int, tuple[int, int, int]] = {}  # item -> (output chunk, its rows in it)
        chunks: list[torch.Tensor] = []
        while len(done) < len(order):
            remaining = [i for i in order if i not in done]
            failed = current = None
            batches = self._prepared(remaining, rows, encode)
            try:
                for keys, batch, tensors in batches:
                    raise_if_stopped()  # a run that stopped waits for no more batches
                    current = (keys, batch)
                    on_device = {
                        k: v.to(self.device, non_blocking=True) for k, v in tensors.items()
                    }
                    out = forward(batch, on_device)
                    self.stats.shapes.add(batch.shape)
                    start = 0
                    for key, count in zip(keys, batch.counts, strict=True):
                        assert key not in done, "an output would be stored twice"
                        done[key] = (len(chunks), start, start + count)
                        start += count
                    chunks.append(out)
            except Exception as error:
                if current is None or not is_out_of_memory(error):
                    raise
                failed = current
            finally:
                batches.close()
            if failed is not None:
                self._back_off(*failed)
        if not chunks:
            return {}
        # one copy back for the whole call: the only point where this thread waits for the device
        host = torch.cat([c if c.dim() == 2 else c[:, None] for c in chunks]).double().cpu().numpy()
        bases = np.cumsum([0] + [len(c) for c in chunks])
        return {key: host[bases[c] + a : bases[c] + b] for key, (c, a, b) in done.items()}

    def _back_off(self, keys: list[int], batch: inputs.Batch) -> None:
        """Halve the budget below the batch that ran out of memory (it is retried)."""
        if len(keys) == 1:
            raise BadInput(
                f"one input of {batch.lengths[0]} tokens does not fit in the device's "
                f"memory even alone; lower max_length",
                field="max_length",
                value=batch.lengths[0],
            )
        tokens = int(np.prod(batch.shape))
        budget = max(1, tokens // 2)
        self.limits = dataclasses.replace(self.limits, max_tokens=budget)
        self.stats.oom_backoffs += 1
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        logger.warning(
            "out of device memory on a batch of %d tokens; retrying it with a budget of "
            "%d tokens per batch",
            tokens,
            budget,
        )

    # -- the producer: tokenise, cut and pad ahead of the model --------------------------

    def _prepared(
        self, order: list[int], rows: dict[int, inputs.ModelInput], encode: Encode
    ) -> Generator[tuple[list[int], inputs.Batch, dict[str, torch.Tensor]], None, None]:
        produce = self._produce(order, rows, encode)
        if self.prefetch == 0:
            return produce
        return _in_background(produce, self.prefetch)

    def _produce(self, order: list[int], rows: dict[int, inputs.ModelInput], encode: Encode):
        def groups():
            for start in range(0, len(order), ENCODE_GROUP):
                group = order[start : start + ENCODE_GROUP]
                missing = [i for i in group if i not in rows]
                rows.update(zip(missing, encode(missing), strict=True) if missing else ())
                yield [(i, len(rows[i])) for i in group]

        limits = self.limits
        for keys in stream_buckets(
            groups(),
            batch_size=limits.batch_size,
            max_batch_tokens=limits.max_tokens,
            pad_multiple=limits.pad_multiple,
            packed=limits.packed,
        ):
            batch = self._arrays([rows[k] for k in keys])
            tensors = {name: torch.from_numpy(array) for name, array in batch.arrays.items()}
            tensors["read_index"] = torch.from_numpy(batch.read_index)
            if self.device.type == "cuda":
                tensors = {name: t.pin_memory() for name, t in tensors.items()}
            yield keys, batch, tensors

    def _arrays(self, rows: list[inputs.ModelInput]) -> inputs.Batch:
        limits = self.limits
        pad_id = self.pad_id(rows) if callable(self.pad_id) else self.pad_id
        if limits.packed:
            batch = inputs.packed(rows, filler_id=pad_id, pad_multiple=limits.pad_multiple)
        else:
            batch = inputs.padded(rows, pad_id=pad_id, pad_multiple=limits.pad_multiple)
        positions = [np.asarray(self.read_positions(r), dtype=np.int64) for r in rows]
        batch.counts = [len(p) for p in positions]
        batch.read_index = (
            np.concatenate([o + p for o, p in zip(batch.offsets, positions, strict=True)])
            if positions
            else np.empty(0, dtype=np.int64)
        )
        return batch


def _in_background(items: Iterator, depth: int) -> Generator:
    """``items`` produced by a background thread, at most ``depth`` ahead of the consumer;
    its errors are raised in the consumer; closing the returned generator stops it."""
    slots: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        slots.put((item, None), timeout=0.05)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slots.put((end, None))
        except BaseException as error:  # handed to the consumer, raised there
            slots.put((end, error))

    thread = threading.Thread(target=produce, name="rmaudit-hf-prefetch", daemon=True)
    thread.start()

    def consume():
        try:
            while True:
                item, error = slots.get()
                if error is not None:
                    raise error
                if item is end:
                    return
                yield item
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    slots.get(timeout=0.05)
                except queue.Empty:
                    pass
            thread.join()

    return consume()
