"""A host script's `--check` report as a unified diff: each drifted setting is its value now (`-`) and the
value the script sets (`+`); the settings of a config file (/etc/nccl.conf) as the file's `KEY=VALUE` lines
under a line naming the file.

The script reports one `DRIFT` line per setting (templates/host/lib.sh):

    DRIFT   ens1f0np0 mtu: is '1500', want '9000'
    DRIFT   /etc/nccl.conf NCCL_IB_TC: is '104', want '106'
    DRIFT   /etc/nccl.conf NCCL_IB_QPS_PER_CONNECTION: missing, want '4'
    DRIFT   /etc/nccl.conf NCCL_DEBUG: is 'INFO' in rocefab's block, want it gone
    DRIFT   /etc/nccl.conf rocefab block: is '<missing>'

A value read as nothing (`''`, `<missing>`, `<absent>`, `<none>`) is no line. A report that names no
setting value (a GID check, a link running at another speed) becomes a note above the diff.
"""

from __future__ import annotations

import re

from rocefab.deploy import unified

_SETTING = re.compile(r"^DRIFT\s+(?P<label>.+?): is '(?P<have>.*)', want '(?P<want>.*)'$")
_CONF = re.compile(r"^DRIFT\s+(?P<file>/\S+) (?P<key>[A-Za-z_][A-Za-z0-9_]*): (?:is '(?P<have>.*)', want "
                   r"'(?P<want>.*)'|missing, want '(?P<added>.*)'|is '(?P<gone>.*)' in rocefab's block, want it gone)$")
_BLOCK = re.compile(r"^DRIFT\s+(?P<file>/\S+) rocefab block: is '<(?:missing|absent)>'$")
_NCCL_HEREDOC = re.compile(r"<<'ROCEFAB_NCCL'\n(?P<body>.*?)\nROCEFAB_NCCL\n", re.S)


def _value(text: str | None) -> str | None:
    if text is None or not text.strip() or re.fullmatch(r"<[a-z ]+>", text):
        return None
    return text


def nccl_block(script: str) -> list[str]:
    """The `KEY=VALUE` lines the rendered host script writes into nccl.conf's rocefab block."""
    match = _NCCL_HEREDOC.search(script)
    return match.group("body").splitlines() if match else []


def drift_diff(device: str, report: str, script: str = "") -> str:
    """The DRIFT lines of `report` as a unified diff (empty when there are none); `script` is the staged
    script, whose NCCL block stands for a block the report says is missing.

    >>> print(drift_diff("gpu001", "ok      x\\nDRIFT   /etc/nccl.conf NCCL_IB_TC: is '104', want '106'\\n"))
    --- gpu001 (running)
    +++ gpu001 (candidate)
    @@ -1,2 +1,2 @@
     # /etc/nccl.conf
    -NCCL_IB_TC=104
    +NCCL_IB_TC=106
    """
    rows: list[tuple[str, str]] = []
    files: dict[str, list[tuple[str, str]]] = {}
    notes: list[str] = []
    for line in report.splitlines():
        if not line.startswith("DRIFT"):
            continue
        if conf := _CONF.match(line):
            key = conf["key"]
            old, new = _value(conf["have"] or conf["gone"]), _value(conf["want"] or conf["added"])
            files.setdefault(conf["file"], []).extend(_pair(f"{key}={old}" if old is not None else None,
                                                            f"{key}={new}" if new is not None else None))
        elif block := _BLOCK.match(line):
            files.setdefault(block["file"], []).extend(("+", v) for v in nccl_block(script) or ["(rocefab's block)"])
        elif setting := _SETTING.match(line):
            old, new = _value(setting["have"]), _value(setting["want"])
            label = setting["label"]
            rows += _pair(f"{label} = {old}" if old is not None else None, f"{label} = {new}" if new is not None
                          else None)
        else:
            notes.append(line)
    for path, lines in files.items():
        rows += [(" ", f"# {path}"), *lines]
    return unified.from_rows(device, rows, notes)


def _pair(old: str | None, new: str | None) -> list[tuple[str, str]]:
    return [*([("-", old)] if old is not None else []), *([("+", new)] if new is not None else [])]

