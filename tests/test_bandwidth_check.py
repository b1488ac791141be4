"""`rocefab bandwidth check` on real-format outputs of ib_write_bw and all_reduce_perf (tests/data/bandwidth,
formats and their sources in SOURCES.md there), against the lab intent's plan, through the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import INTENTS, example_plan

from rocefab.bandwidth.parse import parse_file
from rocefab.bandwidth.results import NcclResult, PerftestResult
from rocefab.renderers.bandwidth import render_bandwidth_tests

DATA = Path(__file__).parent / "data" / "bandwidth"
LAB = INTENTS / "lab.yaml"


def rocefab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocefab", "bandwidth", "check", *map(str, args)],
                          capture_output=True, text=True, check=False, timeout=60)


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab's rendered bandwidth-tests/expected.json, as `rocefab render` writes it."""
    folder = tmp_path_factory.mktemp("render")
    for path, _, content in render_bandwidth_tests(example_plan("lab")):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(content, encoding="utf-8")
    return folder


def test_the_samples_parse_as_the_tools_print_them() -> None:
    result = parse_file(DATA / "pair2-40pct.client.txt")
    assert isinstance(result, PerftestResult)
    assert (result.device, result.qps, result.local_ipv4, result.remote_ipv4) == \
        ("mlx5_bond_0", 8, "10.101.0.5", "10.101.0.7")
    assert result.gbps == 320.41
    assert parse_file(DATA / "pair1.server.txt") is None  # the server's side holds no result
    nccl = parse_file(DATA / "allreduce-low.log")
    assert isinstance(nccl, NcclResult)
    assert len(nccl.hosts) == 32 and set(nccl.hosts) == {"gpu001", "gpu002", "gpu003", "gpu004"}
    assert nccl.rows[-1].size == 8 * 2**30 and nccl.rows[-1].busbw_out == 41.93 and nccl.avg_busbw == 17.0035


def test_a_pair_at_40_percent_fails_with_its_shortfall_and_missing_pairs_fail_too(expected: Path) -> None:
    result = rocefab(DATA / "pair1-pass.client.txt", DATA / "pair2-40pct.client.txt", DATA / "pair1.server.txt",
                     "--plan", expected)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "PASS    round 1 pair 1: gpu001/mlx5_bond_0 -> gpu003/mlx5_bond_0: 742.2 Gb/s of 800 Gb/s line rate " \
           "= 93 % (target 90 %)" in lines
    fail = next(line for line in lines if line.startswith("FAIL"))
    assert "gpu002/mlx5_bond_0 -> gpu004/mlx5_bond_0: 320.4 Gb/s of 800 Gb/s line rate = 40 %, below 90 % " \
           "(720 Gb/s): short by 399.6 Gb/s" in fail
    assert "pair2-40pct.client.txt" in fail
    assert [line.split(":")[0] for line in lines if line.startswith("MISSING")] == \
        ["MISSING round 2 pair 3", "MISSING round 2 pair 4"]
    assert lines[-1] == "FAIL: perftest 1 pass, 1 fail, 2 missing of 4"


def test_all_pairs_of_a_round_passing_exit_0(expected: Path, tmp_path: Path) -> None:
    # pair 2's output with a healthy figure, from a folder as run-perftest.sh lays them out
    folder = tmp_path / "round-001"
    folder.mkdir()
    (folder / "pair-00001.client.txt").write_text((DATA / "pair1-pass.client.txt").read_text())
    (folder / "pair-00002.client.txt").write_text(
        (DATA / "pair2-40pct.client.txt").read_text().replace("320.41 ", "741.88 "))
    (folder / "pair-00001.server.txt").write_text((DATA / "pair1.server.txt").read_text())
    result = rocefab(tmp_path, "--plan", expected / "bandwidth-tests" / "expected.json", "--round", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "PASS: perftest 2 pass, 0 fail, 0 missing of 2"


@pytest.mark.parametrize(("sample", "where", "why"), [
    ("pair1-garbled.client.txt", 52, "not a result row under the table header of line 51"),
    ("pair1-truncated.client.txt", 51, "ends early: the result table of line 51 has no row"),
    ("allreduce-truncated.log", 60, "ends before '# Avg bus bandwidth'"),
])
def test_a_truncated_or_garbled_file_is_an_input_error_with_its_line(expected: Path, sample: str, where: int,
                                                                       why: str) -> None:
    result = rocefab(DATA / "pair1-pass.client.txt", DATA / sample, "--plan", expected)
    assert result.returncode == 2
    assert f"{DATA / sample}:{where}: " in result.stderr and why in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_an_unreadable_file_and_a_stranger_are_input_errors(expected: Path, tmp_path: Path) -> None:
    stranger = tmp_path / "notes.txt"
    stranger.write_text("iperf3 said 9.4 Gbits/sec\n")
    result = rocefab(tmp_path / "absent.txt", stranger, "--plan", expected)
    assert result.returncode == 2
    assert "absent.txt:0: cannot read" in result.stderr
    assert f"{stranger}:1: neither ib_write_bw nor all_reduce_perf output" in result.stderr


def test_nccl_below_target_fails_with_its_shortfall(expected: Path) -> None:
    result = rocefab(DATA / "allreduce-low.log", "--plan", LAB)  # the intent itself, planned by the check
    assert result.returncode == 1
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("FAIL    nccl")]
    assert "nccl 4 node(s), 32 ranks: busbw 41.93 GB/s at 8 GiB = 42 % of a node's 800 Gb/s (100 GB/s), " \
           "below 80 % (80 GB/s): short by 38.1 GB/s" in line


def test_nccl_at_target_passes_and_json_says_so(expected: Path) -> None:
    result = rocefab(DATA / "allreduce-pass.log", "--plan", expected, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True and document["pairs"] == []
    (run,) = document["nccl"]
    assert run["planned"] and run["busbw"] == 86.47 and run["target"] == 80.0 and run["status"] == "pass"


def test_json_lists_every_verdict(expected: Path) -> None:
    result = rocefab(DATA / "pair1-pass.client.txt", DATA / "pair2-40pct.client.txt", "--plan", expected, "--json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert [(p["pair"], p["status"]) for p in document["pairs"]] == [(1, "pass"), (2, "fail"), (3, "missing"),
                                                                      (4, "missing")]


def test_a_plan_folder_without_targets_is_an_input_error(tmp_path: Path) -> None:
    result = rocefab(DATA / "pair1-pass.client.txt", "--plan", tmp_path)
    assert result.returncode == 2 and "no bandwidth-tests/expected.json" in result.stderr
