r"""Terminal output that shows only text: run data is written, never obeyed.

A case id, a tag, a model's answer or a recorded command line can hold a carriage return,
``ESC[2K`` (erase the line), an OSC 52 sequence (set the clipboard) or a bidi override. Written
to a terminal as they are, they overwrite what evalkit printed or put something else on the
clipboard than what is shown. Two paths keep every text output to text:

- :class:`TextOnly` wraps a text stream and passes everything written through the redactor
  and :func:`evalkit._bidi.neutralize_controls`: each such character becomes a visible marker
  (``⟨U+001B⟩``), newline and tab stay. The ``evalkit`` command installs it on ``sys.stdout``
  and ``sys.stderr`` for its whole run (:func:`text_only_output`), so every ``print`` of the
  command line, every error message and every argparse message goes through it.
- evalkit's own styles (bold verdicts, the run's progress bar) are escape sequences that must
  reach the terminal. They are drawn by rich through :func:`console`: a console that writes
  to the stream underneath the wrapper and neutralises the text of every segment it renders,
  so only rich's own styling and cursor control is left as escape sequences.

JSON on stdout keeps every character of the data as an escape: ``json.dumps`` writes ASCII,
every C0 control and every character past ASCII (C1 and bidi controls among them) as
``\uXXXX``, and :func:`json_escaped` writes DEL (ASCII, left raw by ``json.dumps``) and any
control of JSON written with non-ASCII text the same way. The JSON is printable text that
decodes to the exact strings of the run; the wrapper finds nothing in it to change.

In a notebook nothing is wrapped: ``sys.stdout`` is the kernel's, and a :func:`console` is
rich's own console there (it shows HTML), with the same neutralised text.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

from evalkit._bidi import BIDI_CONTROLS, TERMINAL_CONTROLS, neutralize_controls
from evalkit._redact import redact_text

if TYPE_CHECKING:
    from rich.console import Console

#: The characters :func:`json_escaped` writes as ``\\uXXXX`` (json.dumps escapes C0 already).
_JSON_ESCAPES = {
    ord(char): f"\\u{ord(char):04x}"
    for char in (TERMINAL_CONTROLS | BIDI_CONTROLS)
    if ord(char) >= 0x20
}


class TextOnly:
    r"""A text stream that writes what it is given with every display control made visible.

    Args:
        stream: The stream written to (``sys.stdout``, ``sys.stderr``).

    Examples:
        >>> import io
        >>> out = io.StringIO()
        >>> TextOnly(out).write("ok\r\x1b[2Kfake")
        11
        >>> out.getvalue()
        'ok⟨U+000D⟩⟨U+001B⟩[2Kfake'
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` redacted and neutralised; return its length as given (as ``print``).

        Redaction (:func:`evalkit._redact.redact_text`) comes first, so a key in run data that
        the pages black out is blacked out on the terminal too, whatever printed it.
        """
        self.stream.write(neutralize_controls(redact_text(text)))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        """Write each line neutralised."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the stream underneath."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream underneath is a terminal."""
        return bool(self.stream.isatty())

    def fileno(self) -> int:
        """The file descriptor of the stream underneath."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        """The encoding of the stream underneath."""
        return str(getattr(self.stream, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:
        """The error handler of the stream underneath."""
        return getattr(self.stream, "errors", None)

    @property
    def closed(self) -> bool:
        """Whether the stream underneath is closed."""
        return bool(getattr(self.stream, "closed", False))

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes would pass unneutralised: there is no way around it
            raise AttributeError("TextOnly has no 'buffer': write text")
        return getattr(self.stream, name)


def underneath(stream: IO[str] | TextOnly) -> IO[str]:
    """The stream a :class:`TextOnly` writes to (``stream`` itself when it is not one)."""
    return stream.stream if isinstance(stream, TextOnly) else stream


@contextmanager
def text_only_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` wrapped in :class:`TextOnly` for the block's length.

    Streams already wrapped are left as they are; the originals are put back afterwards.
    """
    before = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, TextOnly):
        sys.stdout = cast(TextIO, TextOnly(sys.stdout))
    if not isinstance(sys.stderr, TextOnly):
        sys.stderr = cast(TextIO, TextOnly(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


def json_escaped(text: str) -> str:
    r"""JSON text with DEL, the C1 and the bidi controls written as ``\uXXXX`` escapes.

    These characters can only occur inside JSON strings, where the escape means the same
    character: the text decodes to the same value and holds no display control.

    Examples:
        >>> json_escaped('{"id": "a\u009b2Jb\u202e"}')
        '{"id": "a\\u009b2Jb\\u202e"}'
    """
    return text.translate(_JSON_ESCAPES)


def console(*, stderr: bool = False, **options: Any) -> Console:
    """A rich console whose styles reach the terminal and whose text is neutralised.

    Args:
        stderr: Write to standard error instead of standard output.
        **options: Further arguments of :class:`rich.console.Console`.

    Returns:
        The console. Under the ``evalkit`` command it writes to the stream underneath
        :class:`TextOnly` (its own escape sequences are its styles); elsewhere (a notebook,
        a library call) it is rich's console as usual, on the current standard streams.
    """
    stream = sys.stderr if stderr else sys.stdout
    if isinstance(stream, TextOnly):
        options.setdefault("file", stream.stream)
    shown: Console = _console_class()(stderr=stderr, **options)
    return shown


@lru_cache(maxsize=1)
def _console_class() -> type[Console]:
    """The console class (rich imported only when a console is asked for)."""
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment
    from rich.text import Text

    class TextOnlyConsole(Console):
        """A rich console that shows the text it renders with its controls made visible."""

        def render_str(self, text: str, **kwargs: Any) -> Text:
            """Neutralise ``text`` before rich lays it out (tables keep their widths)."""
            return super().render_str(neutralize_controls(text), **kwargs)

        def render(
            self, renderable: RenderableType, options: ConsoleOptions | None = None
        ) -> Iterable[Segment]:
            """Rich's segments, the text of each neutralised (control segments are rich's)."""
            for segment in super().render(renderable, options):
                shown = segment.text if segment.control else neutralize_controls(segment.text)
                yield segment if shown == segment.text else Segment(shown, segment.style)

    return TextOnlyConsole
