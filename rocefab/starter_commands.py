"""`rocefab init` (a new intent that plans on the first try) and `rocefab examples` (the bundled intents).

Both work from an installed wheel: the schema and the examples ship inside the package (rocefab/schema,
rocefab/intents) and are found through the package, never through a checkout.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer

from rocefab import __version__
from rocefab.console import EXIT_INPUT, command_group, err, out
from rocefab.starter_intent import DEFAULT_NICS, MAX_NICS, MAX_NODES, SPEEDS_GBPS, StarterOptions, starter_intent

SCHEMA_LINE = re.compile(r"#\s*yaml-language-server:\s*\$schema=\S*")


def _fail(message: str) -> typer.Exit:
    err.print(message, markup=False)
    return typer.Exit(EXIT_INPUT)


def installed_schema() -> Path:
    """The schema file this installation carries."""
    return Path(str(files("rocefab").joinpath("schema", "intent.schema.json")))


def schema_ref(intent_file: Path) -> str:
    """How a yaml-language-server line in `intent_file` names the installed schema: relative when it can be (the
    file and the schema then move together, as in a checkout), else absolute."""
    schema, folder = installed_schema().resolve(), intent_file.resolve().parent
    try:
        shared = os.path.commonpath([schema, folder])
    except ValueError:  # another drive on Windows
        return schema.as_posix()
    if Path(shared) == Path(shared).parent:  # only the root in common: a relative path would climb all the way
        return schema.as_posix()
    return Path(os.path.relpath(schema, folder)).as_posix()


def _write_new(target: Path, text: str, force: bool) -> None:
    if target.exists() and not force:
        raise _fail(f"{target} exists; pass --force to replace it")
    if target.is_dir():
        raise _fail(f"{target} is a folder; give a file name")
    if not target.parent.is_dir():
        raise _fail(f"{target.parent} is not a folder")
    target.write_text(text, encoding="utf-8")


# --- init --------------------------------------------------------------------------------------------------


def _speed(text: str) -> int:
    """`400G`, `400g` or `400` as a catalogue speed in Gb/s."""
    match = re.fullmatch(r"(\d+)\s*[gG]?(?:b(?:/s|ps)?)?", text.strip())
    speed = int(match.group(1)) if match else 0
    if speed not in SPEEDS_GBPS:
        raise _fail(f"--speed {text!r}: expected one of {', '.join(f'{s}G' for s in SPEEDS_GBPS)}")
    return speed


def _model(text: str, flag: str) -> str:
    from rocefab.models.catalogue import MODELS, lookup_model

    model = lookup_model(text)
    if model is None:
        raise _fail(f"{flag} {text!r}: not in the catalogue; known models: {', '.join(sorted(MODELS))}")
    return model.name


def _name(text: str) -> str:
    from rocefab.models.types import DEVICE_NAME_PATTERN

    if not re.fullmatch(DEVICE_NAME_PATTERN, text):
        raise _fail(f"--name {text!r}: lower-case letters, digits and inner '-', up to 63 characters")
    return text


def _check_text(target: Path, text: str) -> None:
    """Plan the written text as `rocefab validate` would, from a file beside the target (so nothing half-made is
    left at the target); a combination that does not build is a bad flag value."""
    from rocefab.models.findings import dotted
    from rocefab.renderers.pipeline import check_file

    handle, scratch = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".yaml", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        checked = check_file(scratch, __version__)
    finally:
        Path(scratch).unlink(missing_ok=True)
    if not checked.ok:
        # The options are the input here, so the findings name intent fields, not lines of a scratch file.
        for f in checked.findings:
            if f.is_error:
                hint = f" ({f.hint})" if f.hint else ""
                err.print(f"error [{f.code}] {dotted(f.path)}: {f.message}{hint}", markup=False)
        raise _fail("these options do not give a fabric rocefab can build; nothing was written")


def init(
    output: Annotated[Path, typer.Option("-o", "--output", help="the intent file to write", show_default=False)],
    design: Annotated[str, typer.Option(help="tor: servers dual-homed to ToR leaf pairs; rail: rail-optimized")
                      ] = "tor",
    nodes: Annotated[int, typer.Option(min=1, max=MAX_NODES, help="GPU servers")] = 32,
    nics: Annotated[int | None, typer.Option(min=1, max=MAX_NICS, help="NICs per server: dual-port bonds (tor) "
                                                                       "or rails (rail) [default: 2 / 8]")] = None,
    speed: Annotated[str, typer.Option(help="NIC port speed, e.g. 400G")] = "400G",
    leaf_model: Annotated[str, typer.Option(help="leaf switch model (catalogue)")] = "SN5600",
    spine_model: Annotated[str | None, typer.Option(help="spine switch model (catalogue) [default: the leaf "
                                                         "model]", show_default=False)] = None,
    name: Annotated[str, typer.Option(help="fabric name")] = "fabric",
    force: Annotated[bool, typer.Option("--force", help="replace an existing file")] = False,
) -> None:
    """Write a new intent for a sized fabric, with comments, that `rocefab validate` accepts as it is."""
    if design not in ("tor", "rail"):
        raise _fail(f"--design {design!r}: expected tor or rail")
    if output.exists() and not force:
        raise _fail(f"{output} exists; pass --force to replace it")
    options = StarterOptions(
        name=_name(name), design="tor" if design == "tor" else "rail", nodes=nodes,
        nics=nics if nics is not None else DEFAULT_NICS[design], speed_gbps=_speed(speed),
        leaf_model=_model(leaf_model, "--leaf-model"),
        spine_model=_model(spine_model, "--spine-model") if spine_model is not None else _model(leaf_model, ""),
    )
    if not output.parent.is_dir():
        raise _fail(f"{output.parent} is not a folder")
    text = starter_intent(options, schema_ref(output))
    _check_text(output, text)
    _write_new(output, text, force)
    servers = f"{options.nodes} server{'s' if options.nodes != 1 else ''}"
    out.print(f"wrote {output}: {servers}, {design}; next: rocefab plan {output}", markup=False)


# --- examples ----------------------------------------------------------------------------------------------

examples_app = command_group(help="The example intents bundled with rocefab.", invoke_without_command=True,
                             no_args_is_help=False)


@dataclass(frozen=True, slots=True)
class Example:
    name: str
    description: str  # the file's first comment line after the yaml-language-server line
    size: str


def _bundled() -> dict[str, str]:
    """Name -> text of every bundled example intent."""
    folder = files("rocefab").joinpath("intents")
    return {Path(entry.name).stem: entry.read_text(encoding="utf-8")
            for entry in sorted(folder.iterdir(), key=lambda e: e.name) if entry.name.endswith(".yaml")}


def _first_comment(text: str) -> str:
    """The first sentence of the file's opening comment (which may wrap over several lines)."""
    words: list[str] = []
    for line in text.splitlines():
        if SCHEMA_LINE.fullmatch(line.strip()):
            continue
        if not line.startswith("#"):
            break
        words.append(line.lstrip("#").strip())
    comment = " ".join(w for w in words if w)
    end = comment.find(". ")
    return comment if end < 0 else comment[: end + 1]


def _size(text: str) -> str:
    """The size the intent states (servers, NICs, leaf pairs), without planning it."""
    import yaml

    topology = (yaml.safe_load(text) or {}).get("topology", {})
    if "nodes" in topology:
        return f"{topology['nodes']} servers x {topology.get('nics_per_node', '?')} NICs, {topology.get('design')}"
    pairs = topology.get("leaf_pairs", [])
    hosts = sum(int(p.get("hosts", 0)) or len(p.get("host_names", ())) for p in pairs)
    return f"{hosts} servers, {len(pairs)} leaf pair(s), {topology.get('spines', {}).get('count', '?')} spine(s)"


def bundled_examples() -> list[Example]:
    return [Example(name, _first_comment(text), _size(text)) for name, text in _bundled().items()]


@examples_app.callback()
def examples(ctx: typer.Context) -> None:
    """List the bundled example intents; `rocefab examples copy NAME` copies one."""
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    table = Table(title="bundled example intents (rocefab examples copy NAME)", title_justify="left")
    for column in ("name", "size", "description"):
        table.add_column(column)
    for example in bundled_examples():
        table.add_row(example.name, example.size, example.description)
    out.print(table)


@examples_app.command()
def copy(
    name: Annotated[str, typer.Argument(help="example name, as `rocefab examples` lists it", show_default=False)],
    output: Annotated[Path, typer.Option("-o", "--output", help="folder to copy into")] = Path(),
    force: Annotated[bool, typer.Option("--force", help="replace an existing file")] = False,
) -> None:
    """Copy a bundled example intent into a folder, its schema line pointing at this installation's schema."""
    bundled = _bundled()
    if name.removesuffix(".yaml") not in bundled:
        raise _fail(f"no example {name!r}; bundled: {', '.join(bundled)}")
    name = name.removesuffix(".yaml")
    if not output.is_dir():
        raise _fail(f"{output} is not a folder")
    target = output / f"{name}.yaml"
    lines = bundled[name].splitlines(keepends=True)
    if lines and SCHEMA_LINE.fullmatch(lines[0].strip()):
        lines[0] = f"# yaml-language-server: $schema={schema_ref(target)}\n"
    _write_new(target, "".join(lines), force)
    out.print(f"wrote {target}", markup=False)
