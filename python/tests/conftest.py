"""Fixtures: tables of tiers 0..=12 made by the oware binary (OWARE_BIN, or the release build
of this workspace)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def oware_bin() -> str:
    path = os.environ.get("OWARE_BIN", str(ROOT / "target" / "release" / "oware"))
    if not os.path.exists(path):
        pytest.fail(f"no oware binary at {path}: cargo build --release, or set OWARE_BIN")
    return path


def run(*args) -> str:
    out = subprocess.run([oware_bin(), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"oware {' '.join(args)}: {out.stderr}")
    return out.stdout


def tables(tmp_path_factory, rules: str, max_seeds: int) -> pathlib.Path:
    d = tmp_path_factory.mktemp(f"{rules}-{max_seeds}")
    run("generate", "--quiet", "--rules", rules, "--max-seeds", str(max_seeds), "--dir", str(d))
    return d


@pytest.fixture(scope="session")
def abapa12(tmp_path_factory):
    return tables(tmp_path_factory, "abapa", 12)


@pytest.fixture(scope="session")
def awari12(tmp_path_factory):
    return tables(tmp_path_factory, "awari", 12)
