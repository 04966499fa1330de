"""Executors: where a stage's component runs its batches (docs/architecture.md, "Executors").

The runner hands an executor a component, the name of its batch method (``generate``,
``label`` or ``score``) and a stream of batches; the executor gives back each batch with the
method's outputs.  It never touches the store: the driver stays the single writer to SQLite
and commits every returned batch in one transaction, so exactly-once storage and resume work
the same whichever executor computed the batch.

* ``local`` (the default) calls the component in-process, in a worker thread (one per stage)
  one batch ahead of the driver: while the driver writes batch k (and reads the inputs of
  k + 2 from the store), the worker computes batch k + 1, so SQLite never stands between two
  of the model's batches.  Batches come back in order, each once, and only after their call
  returned.
* ``ray`` runs the batches on a pool of Ray actors.  Each actor builds its own copy of the
  stage's component on its first batch, from the component's class and validated options (a
  model loads once per worker), and runs one batch at a time.  An actor that dies is
  restarted and its batch retried (``max_restarts``): the retried batch rebuilds the
  component on the fresh actor, and the driver stores each batch it gets back once.
  CPU-only pools carry over to the next stage that asks for the same resources (starting a
  worker process costs about a second); a pool with GPUs ends with its stage, because only a
  process exit surely hands all of a model's GPU memory back before the next model loads.

Ray is imported only when a ray executor runs its first batch: the core install and a local
run never need it.
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from rmaudit.components import Component
from rmaudit.components.options import shared_limits
from rmaudit.components.stopping import stoppable
from rmaudit.recipe.executor_options import (
    INSTALL_HINT,
    ExecutorOptions,
    LocalExecutorOptions,
    PoolOptions,
    RayExecutorOptions,
)

K = TypeVar("K")  # what the runner tags a batch with (its items), handed back with the outputs


class LocalExecutor:
    """Calls the component in this process: in a worker thread one batch ahead of the
    driver (``overlap``), or in the driver thread itself."""

    def __init__(self, options: LocalExecutorOptions | None = None) -> None:
        self.options = options or LocalExecutorOptions()

    def map(
        self, component: Component, method: str, batches: Iterable[tuple[K, list[Any]]]
    ) -> Generator[tuple[K, list[Any]], None, None]:
        call = getattr(component, method)
        if not self.options.overlap:
            for tag, inputs in batches:
                yield tag, call(inputs)
            return
        # The inputs are made here, in the driver thread (they may read the store, whose
        # connection belongs to it); only the component's calls run in the stage's worker.
        queued = iter(batches)
        item = next(queued, None)
        if item is None:
            return
        worker = _Worker(call)
        running: _Call | None = worker.submit(item[1])
        try:
            while running is not None and item is not None:  # both set, or both None
                tag = item[0]
                try:
                    item = next(queued, None)  # made while the worker computes
                except BaseException:
                    yield tag, running.result()  # what was computed is still stored
                    raise
                outputs = running.result()
                running = None if item is None else worker.submit(item[1])
                yield tag, outputs  # the driver writes it while the worker computes the next
        finally:
            if running is not None:  # the consumer stopped early (an error, Ctrl-C)
                running.stop()
            worker.close()

    def close(self) -> None:
        """Nothing to release: each stage's worker thread ends with the stage."""


class _Worker:
    """The thread that makes a stage's component calls, one at a time, in the order they are
    submitted: started with the stage's first batch and ended with the stage (not a thread per
    batch, whose start costs the driver a wait for the GIL every batch).  A daemon thread, so a
    second Ctrl-C during a wait for it still exits."""

    def __init__(self, call: Callable[[list[Any]], list[Any]]) -> None:
        self._call = call
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._ended = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, name="rmaudit-local-executor", daemon=True
        )
        self._thread.start()

    def submit(self, inputs: list[Any]) -> _Call:
        pending = _Call(inputs)
        self._calls.put(pending)
        return pending

    def _serve(self) -> None:
        try:
            while (pending := self._calls.get()) is not None:
                pending.run(self._call)
        finally:
            self._ended.set()

    def close(self) -> None:
        """End the thread once the calls submitted have ended (on an event, not
        ``Thread.join`` alone: see :meth:`_Call.wait`)."""
        self._calls.put(None)
        self._ended.wait()
        self._thread.join()


class _Call:
    """One component call, made by the stage's worker.  The executor waits for it even when
    the run stops (:mod:`rmaudit.components.stopping`)."""

    def __init__(self, inputs: list[Any]) -> None:
        self._inputs: list[Any] | None = inputs
        self._outputs: list[Any] | None = None
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._ended = threading.Event()

    def run(self, call: Callable[[list[Any]], list[Any]]) -> None:
        inputs, self._inputs = self._inputs, None  # not kept once the call has them
        try:
            with stoppable(self._stop):
                self._outputs = call(inputs)  # type: ignore[arg-type]
        except BaseException as error:  # raised in the driver, by result()
            self._error = error
        finally:
            self._ended.set()

    def wait(self) -> None:
        # on an event, not Thread.join: in Python 3.11 a join that Ctrl-C interrupts marks the
        # thread stopped while it still runs (CPython issue 90882), so the next join returns
        # at once and the process would exit under a running model
        self._ended.wait()

    def stop(self) -> None:
        """Ask the call to stop at its next check and wait until it has ended."""
        self._stop.set()
        self.wait()

    def result(self) -> list[Any]:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._outputs  # type: ignore[return-value]


class ComponentWorker:
    """A Ray actor's state: the component of the stage it serves, built on its first batch."""

    def __init__(self) -> None:
        self.build_key: str | None = None
        self.component: Component | None = None

    def run(
        self, build: tuple[str, type[Component], BaseModel], method: str, inputs: list[Any]
    ) -> list[Any]:
        key, cls, options = build
        if key != self.build_key:
            self.component = None  # the previous stage's model goes before the next one loads
            self.component = cls(options)
            self.build_key = key
        return getattr(self.component, method)(inputs)


class RayExecutor:
    """Runs each stage's batches on a pool of Ray actors and streams the outputs back."""

    def __init__(self, options: RayExecutorOptions) -> None:
        self.options = options
        self._ray: Any = None
        self._started_ray = False  # shut down only a Ray instance this executor started
        #: The CPU-only pool kept for the next stage: its resources and its actors.
        self._kept: tuple[PoolOptions, list[Any]] | None = None

    def _connect(self) -> Any:
        if self._ray is None:
            try:
                import ray
            except ImportError:  # recipes are checked at load; this is an install changed since
                raise RuntimeError(f"the ray executor needs Ray: {INSTALL_HINT}") from None
            if not ray.is_initialized():
                ray.init(
                    address=self.options.address,
                    runtime_env=self.options.runtime_env,
                    include_dashboard=False,
                    configure_logging=False,
                )
                self._started_ray = True
            self._ray = ray
        return self._ray

    def worker_options(self, component: Component, workers: int) -> list[BaseModel]:
        """Each actor's options: the component's own, except that every ``SHARED_LIMIT``
        option (an API component's ``concurrency``: requests in flight) is one budget split
        across the pool, so the whole cluster keeps the recipe's limit, the one the API's rate
        limit was sized for."""
        options = component.options
        shares = {name: divmod(limit, workers) for name, limit in shared_limits(options).items()}
        if not shares:
            return [options] * workers
        return [
            options.model_copy(
                update={name: share + (i < extra) for name, (share, extra) in shares.items()}
            )
            for i in range(workers)
        ]

    def map(
        self, component: Component, method: str, batches: Iterable[tuple[K, list[Any]]]
    ) -> Generator[tuple[K, list[Any]], None, None]:
        ray = self._connect()
        pool = self.options.pool(component.kind)
        assert pool.num_workers is not None, "pool() resolves every field"
        # each actor gets ≥ 1 of each shared limit
        size = min([pool.num_workers, *shared_limits(component.options).values()])
        workers = self._workers(ray, pool, size)
        # shipped once to the object store, not with every batch
        builds = [
            ray.put((uuid.uuid4().hex, type(component), options))
            for options in self.worker_options(component, size)
        ]
        queued = iter(batches)
        # Not ray.util.ActorPool: it runs one task per actor (here batches_per_worker are queued,
        # so the next batch travels while one runs) and hands results back unordered without
        # saying which submission they answer (the runner needs each batch's tag).
        in_flight: dict[Any, tuple[K, int]] = {}  # object ref → (batch tag, actor index)
        # actor slots, round-robin: the first batches go one to each actor
        free = deque(i for _ in range(self.options.batches_per_worker) for i in range(size))
        try:
            while True:
                while free:
                    item = next(queued, None)
                    if item is None:
                        break
                    tag, inputs = item
                    actor = free.popleft()
                    in_flight[workers[actor].run.remote(builds[actor], method, inputs)] = (
                        tag,
                        actor,
                    )
                if not in_flight:
                    return
                [done], _ = ray.wait(list(in_flight), num_returns=1)
                tag, actor = in_flight.pop(done)
                free.append(actor)
                yield tag, self._result(ray, done, component)
        except Exception:
            _settle(ray, in_flight)
            raise
        finally:
            if pool.num_gpus:
                self._kill(workers)
            else:
                self._kept = (pool, workers)

    def _workers(self, ray: Any, pool: PoolOptions, size: int) -> list[Any]:
        """``size`` actors with ``pool``'s resources: the kept pool's if it has them (grown if
        need be), else new ones, after the kept pool is gone so its resources are free."""
        kept, self._kept = self._kept, None
        if kept is not None and kept[0] == pool:
            workers = kept[1]
        else:
            self._kill(kept[1] if kept else [])
            workers = []
        actor_class = ray.remote(ComponentWorker).options(
            num_cpus=pool.num_cpus,
            num_gpus=pool.num_gpus,
            max_restarts=self.options.max_restarts,
            # an actor task lost with its process is rerun on the restarted actor
            max_task_retries=self.options.max_restarts,
        )
        workers += [actor_class.remote() for _ in range(size - len(workers))]
        return workers

    def _kill(self, workers: list[Any]) -> None:
        for worker in workers:
            self._ray.kill(worker)  # frees its CPUs and GPUs

    def _result(self, ray: Any, ref: Any, component: Component) -> list[Any]:
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            # the component's own exception (a BadInput the runner locates in the recipe, an
            # API error), with the worker's traceback chained
            raise (error.cause or error) from error
        except ray.exceptions.RayActorError as error:
            raise RuntimeError(
                f"a Ray worker running {component.kind} {component.name!r} died "
                f"more than max_restarts = {self.options.max_restarts} times; "
                f"rerun to resume: {str(error).splitlines()[0]}"
            ) from None

    def close(self) -> None:
        if self._kept is not None:
            self._kill(self._kept[1])
            self._kept = None
        if self._started_ray:
            self._ray.shutdown()
        self._ray, self._started_ray = None, False


def _settle(ray: Any, in_flight: dict[Any, Any]) -> None:
    """Wait for the batches still running when one failed and take their outcomes: Ray prints
    each error no one fetched as an "Unhandled error", long after the run's own one line."""
    if in_flight:
        ray.wait(list(in_flight), num_returns=len(in_flight))
    for ref in in_flight:
        try:
            ray.get(ref)
        except Exception:  # the batch's error: the run already stops on the first one
            pass


def make_executor(options: ExecutorOptions) -> LocalExecutor | RayExecutor:
    return (
        RayExecutor(options) if isinstance(options, RayExecutorOptions) else LocalExecutor(options)
    )
