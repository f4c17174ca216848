"""An ``aclnn-stress`` command as data: :class:`Command` holds what ``--help`` says about it,
the function that adds its arguments, what it runs and its own actions (``sim path``,
``corpus generate``...); :func:`add_command` is the one place a command becomes an argparse
subparser. Here, below the CLI and the gradcheck, so that both declare their commands alike."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Command", "add_command"]


@dataclass(frozen=True)
class Command:
    """One command or action. ``help`` is its line in the parent's list; ``arguments`` adds its
    options and positionals; ``run`` (``args.func``) returns the exit code, and an action without
    one runs its parent's. ``actions`` are its own subcommands, required, the one given named by
    ``args.<name>_command``. ``defaults`` are set beside ``func`` (settings the command fixes);
    ``preformatted``: the description and epilog keep their line breaks."""

    name: str
    help: str
    description: str | None = None
    epilog: str | None = None
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    run: Callable[[argparse.Namespace], int] | None = None
    actions: tuple[Command, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    preformatted: bool = False


def add_command(subparsers: argparse._SubParsersAction, command: Command) -> None:
    """Add ``command`` (and its actions, in order) to ``subparsers``."""
    p = subparsers.add_parser(
        command.name,
        help=command.help,
        description=command.description,
        epilog=command.epilog,
        formatter_class=(
            argparse.RawDescriptionHelpFormatter if command.preformatted else argparse.HelpFormatter
        ),
    )
    if command.arguments is not None:
        command.arguments(p)
    if command.actions:
        sub = p.add_subparsers(dest=f"{command.name}_command", metavar="ACTION", required=True)
        for action in command.actions:
            add_command(sub, action)
    if command.run is not None:
        p.set_defaults(func=command.run, **command.defaults)
