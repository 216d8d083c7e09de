"""How the `sluice` command fails and stops: every mistake is one line on
stderr and exit status 2 (`--debug` shows the traceback instead), and
Ctrl-C or SIGTERM ends a command with status 130 after it has written
what it measured."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn, Optional

import click

#: Exit status of a command that was refused.
REFUSED = 2
#: Exit status of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT).
INTERRUPTED = 130

#: Errors that are the user's input, not Sluice's bug: shown as one line.
USER_ERRORS = (ValueError, RuntimeError, OSError, json.JSONDecodeError, UnicodeDecodeError, OverflowError)


class Refused(click.ClickException):
    """A one-line error with exit status 2."""

    exit_code = REFUSED


class Interrupted(click.exceptions.Exit):
    """Ends the command with status 130 (Ctrl-C, SIGTERM)."""

    def __init__(self) -> None:
        super().__init__(INTERRUPTED)


class Command(click.Group):
    """The `sluice` group: turns user errors into one line (exit 2) and
    Ctrl-C / SIGTERM into exit 130, unless `--debug` asks for tracebacks."""

    def invoke(self, ctx: click.Context) -> Any:
        stop_on_signals()
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort):
            raise
        except click.UsageError as e:
            if debug:
                raise
            raise Refused(e.format_message()) from None
        except click.ClickException:
            raise
        except KeyboardInterrupt:
            if debug:
                raise
            click.echo("sluice: interrupted", err=True)
            raise Interrupted() from None
        except USER_ERRORS as e:
            if debug:
                raise
            raise Refused(one_line(e)) from None


def stop_on_signals() -> None:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt, also where the shell
    started the command with SIGINT ignored (a background job of a
    script), and one that lands while Python runs a finalizer, which can
    only report it, is delivered again once the finalizer is done."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    sys.unraisablehook = _interrupt_not_lost


def _raise_interrupt(_signum: int, _frame: Any) -> NoReturn:
    raise KeyboardInterrupt


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done, then stop the
    command as usual: for imports, whose half-built objects an interrupt
    would leave to report errors from their finalizers (matplotlib's
    pyparsing does). Elsewhere than in the main thread, which alone
    takes signals, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:
        raise KeyboardInterrupt


#: How long after a finalizer swallowed a Ctrl-C it is sent again (s).
REDELIVER_AFTER_S = 0.01


def _interrupt_not_lost(unraisable: Any) -> None:
    """`sys.unraisablehook`: a KeyboardInterrupt raised in a finalizer (or
    any code whose exceptions Python can only report) is sent again as
    SIGINT from another thread a moment later, when the main thread has
    left the finalizer and the signal stops the command; other exceptions
    are reported as Python does."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        def resend() -> None:
            time.sleep(REDELIVER_AFTER_S)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=resend, daemon=True).start()
    else:
        sys.__unraisablehook__(unraisable)


def one_line(e: BaseException) -> str:
    """The message of `e` on one line, the file it names included."""
    if isinstance(e, OSError) and e.filename is not None:
        message = f"{e.strerror or e}: {e.filename}"
    else:
        message = str(e) or type(e).__name__
    return " ".join(message.split())


def unwritable(path: Optional[str], what: str) -> Optional[str]:
    """Why `path` (an output file, given as option `what`) cannot be
    written — a folder, or in a folder that does not exist or cannot be
    written — or None when it can (or is not asked for)."""
    if not path:
        return None
    if os.path.isdir(path):
        return f"{what} {path!r} is a folder; give a file name"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"{what} {path!r}: folder {folder!r} does not exist"
    if not os.access(folder, os.W_OK):
        return f"{what} {path!r}: folder {folder!r} is not writable"
    return None


def writable(path: Optional[str], what: str) -> None:
    """Refuses `path` (an output file) before any work when it cannot be written (see `unwritable`)."""
    reason = unwritable(path, what)
    if reason is not None:
        raise Refused(reason)


def writable_folder(path: str, what: str) -> None:
    """Refuses `path` (an output folder, made if missing) when it is a file or cannot be made or written."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise Refused(f"{what} {path!r} is a file; give a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise Refused(f"{what} {path!r}: {one_line(e)}") from None
    if not os.access(path, os.W_OK):
        raise Refused(f"{what} {path!r} is not writable")
