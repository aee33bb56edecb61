"""The ``bece`` parser for sphinx-argparse, its texts escaped for reStructuredText.

sphinx-argparse reads each help text and description as reStructuredText, in
which ``p_`` (a column prefix) is a link to a target named ``p`` and ``*`` opens
emphasis. The command's own ``--help`` shows the texts as written; this module
escapes those characters so the reference page shows them the same way.
"""

from __future__ import annotations

import argparse
import re

from bece._cli.parser import build_parser


def _escape(text: str | None) -> str | None:
    if not text:
        return text
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("|", "\\|")
    return re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)


def _walk(parser: argparse.ArgumentParser) -> None:
    parser.description = _escape(parser.description)
    parser.epilog = _escape(parser.epilog)
    for action in parser._actions:
        if action.help not in (None, argparse.SUPPRESS):
            action.help = _escape(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = _escape(choice.help)
            for sub in action.choices.values():
                _walk(sub)


def parser() -> argparse.ArgumentParser:
    """``bece._cli.parser.build_parser()`` with reStructuredText-safe texts."""
    p = build_parser()
    _walk(p)
    return p
