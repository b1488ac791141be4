"""The fast YAML writer prints exactly what PyYAML's safe dumper prints, for any configuration tree."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import EXAMPLES, example_plan
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rocefab.platforms.cumulus.config import nvue_document
from rocefab.renderers.yamltext import _PLAIN, dump_block

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Strings that need PyYAML's care: YAML 1.1 booleans and numbers, indicators, spaces, colons, quotes.
tricky = st.sampled_from(["on", "off", "yes", "No", "null", "~", "", "1", "0x1F", "1e3", "1:2", "10.0.0.1/31",
                          "a: b", "a #b", "#x", "- x", "'q'", '"d"', "swp1s0", " lead", "trail ", "@x", "%y",
                          "*z", "&w", "!t", "|", ">", "[a]", "{b}", "a,b", "Ethernet1/1", "2001:db8::1/64",
                          "caf\u00e9", "tab\there", "On", "NULL", "yEs", "gpu001 enp24s0np0", "a  b", "a.b",
                          "x-y", "10.0.0.1/31", "10.0", "1.2.3.4/99", "999.1.1.1", "a/b c/d", "Y", "n", "_x"])
scalars = st.one_of(tricky, st.text(max_size=12).filter(lambda s: "\n" not in s and "\r" not in s),
                    st.integers(-10**6, 10**12), st.booleans())
keys = st.one_of(tricky.filter(bool), st.text(min_size=1, max_size=8).filter(lambda s: not any(c in s for c in "\n\r")),
                 st.integers(0, 4096))
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=30,
)


def pyyaml(document: Any) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(trees, max_size=4), st.dictionaries(keys, trees, max_size=5)))
def test_prints_what_pyyaml_prints(document: Any) -> None:
    # PyYAML folds some strings (unprintable characters) over several lines; configuration never holds them.
    assume(all("\n" not in pyyaml([s])[2:-1] for s in _strings(document)))
    try:
        ours = dump_block(document)
    except ValueError:
        assume(False)  # a key PyYAML would write as "? key": refused, see the test below
        return
    assert ours == pyyaml(document)


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def test_the_rendered_nvue_documents_match(example_nvue_documents: list[Any]) -> None:
    for document in example_nvue_documents:
        # PyYAML would print a subtree the document shares (document_text.Shared) as an alias, and refuses the
        # dict subclass; the text must be that of the same data with a plain copy in each place
        assert dump_block(document) == pyyaml(_plain(document))


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


@pytest.fixture
def example_nvue_documents() -> list[Any]:
    documents = []
    for name in EXAMPLES:
        plan = example_plan(name)
        documents += [[{"set": nvue_document(plan, s)}] for s in plan.switches if s.platform == "cumulus"][:8]
    assert documents
    return documents


@settings(max_examples=300, deadline=None)
@given(st.from_regex(_PLAIN, fullmatch=True))
def test_the_plain_shortcut_agrees_with_pyyaml(text: str) -> None:
    """Every string the writer prints without asking PyYAML, PyYAML prints the same way."""
    document = {text: text} if len(text) <= 128 else {"key": text}  # longer keys are refused, see below
    assert dump_block(document) == pyyaml(document)


def test_refuses_what_configuration_never_holds() -> None:
    with pytest.raises(TypeError):
        dump_block({"a": 1.5})
    with pytest.raises(ValueError):
        dump_block({"a": "two\nlines"})
    with pytest.raises(ValueError):
        dump_block({"\x85": 1})
