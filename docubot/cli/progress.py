"""Progress of the long commands (ingest, eval) on stderr: a Rich bar on a terminal, and elsewhere
(CI logs, pipes, `nohup`) a plain line at every tenth of the work and at least every
PROGRESS_EVERY_S seconds, e.g. `embedded 40/141 chunks`. Nothing with `--json` (quiet)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from docubot.cli.common import err_console

PROGRESS_EVERY_S = 15.0
STEPS = 10
"""Off a terminal, a line each time another 1/STEPS of the work is done."""


class Tracker(Protocol):
    def update(self, done: int, total: int) -> None:
        """`done` of `total` items are done."""

    def advance(self) -> None:
        """One more item is done."""


@contextmanager
def progress(
    verb: str,
    noun: str,
    total: int | None = None,
    *,
    quiet: bool = False,
    console: Console = err_console,
    every_s: float = PROGRESS_EVERY_S,
) -> Iterator[Tracker]:
    """Report `verb` `done`/`total` `noun` (e.g. "embedded", "chunks") while the block runs."""
    if quiet:
        yield _Silent()
    elif console.is_terminal:
        with Progress(
            TextColumn(f"{noun} {verb}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            yield _Bar(bar, bar.add_task(noun, total=total))
    else:
        yield Lines(
            lambda text: console.print(text, highlight=False, markup=False), verb, noun, total, every_s
        )


class Lines:
    """The off-terminal report: `print` a line per tenth of `total` done, or after `every_s` seconds."""

    def __init__(
        self,
        print: Callable[[str], None],
        verb: str,
        noun: str,
        total: int | None,
        every_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._print, self.verb, self.noun, self.total = print, verb, noun, total
        self.every_s, self._clock = every_s, clock
        self.done = 0
        self._printed_step, self._printed_at, self._printed_done = 0, clock(), 0

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if not total or done <= self._printed_done:
            return
        step = done * STEPS // total
        now = self._clock()
        if step > self._printed_step or now - self._printed_at >= self.every_s:
            self._print(f"{self.verb} {done}/{total} {self.noun}")
            self._printed_step, self._printed_at, self._printed_done = step, now, done

    def advance(self) -> None:
        self.update(self.done + 1, self.total or 0)


class _Bar:
    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar, self.task = bar, task

    def update(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)

    def advance(self) -> None:
        self.bar.advance(self.task)


class _Silent:
    def update(self, done: int, total: int) -> None:
        pass

    def advance(self) -> None:
        pass
