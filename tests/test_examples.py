"""The reproduction scripts run end to end (their quick variants, on the shared data)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, data_dir, shared_file


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.data
def test_make_mfn_quick_writes_its_tables(tmp_path):
    # the MFN quick targets take seconds; CI runs the whole `make -C examples quick` as its
    # own step (.ci/run), since the SECTOR targets take about a minute
    shared_file("binary/a9a")
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = dict(os.environ, LINSVM_DATA=str(data_dir()), PYTHON=sys.executable)
    proc = subprocess.run(["make", "-C", str(REPO / "examples"), "mfn-quick", f"RESULTS={tmp_path}",
                           f"PYTHON={sys.executable}"], capture_output=True, text=True, env=env,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = sorted(p.name for p in (tmp_path / "quick").glob("*.md"))
    assert "mfn_table1.md" in written and "mfn_table3.md" in written
    table = (tmp_path / "quick" / "mfn_table3.md").read_text()
    assert "| Adult-9 | both | 3 |" in table        # the paper's number beside ours


@pytest.mark.slow
@pytest.mark.subprocess
def test_reproduce_quick_skips_targets_without_data(tmp_path):
    # the CI step `make -C examples quick` must pass on a machine without the shared data:
    # each target whose data set is absent is skipped, one line names them all, exit 0
    empty = tmp_path / "no-data"
    empty.mkdir()
    targets = ["mfn-table1", "mfn-figure1", "sdm-table4-2", "sdm-figure3", "perf-table1", "alm-table3"]
    env = dict(os.environ, LINSVM_DATA=str(empty))
    cmd = [sys.executable, str(REPO / "examples" / "reproduce.py"), "--out", str(tmp_path / "out")]
    proc = subprocess.run(cmd + ["--quick"] + targets, capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "skipped 6 of 6 targets" in lines[0], proc.stderr
    assert all(t in lines[0] for t in targets) and "binary/a9a" in lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.md"))
    # a full (non-quick) run that cannot reproduce a table says so and fails
    proc = subprocess.run(cmd + ["mfn-table3"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1 and "mfn-table3 (binary/a9a)" in proc.stderr


@pytest.mark.subprocess
@pytest.mark.data
def test_fetch_data_links_checked_files(tmp_path):
    shared_file("binary/heart_scale")
    listing = tmp_path / "datasets.txt"
    line = next(l for l in (REPO / "datasets.txt").read_text().splitlines() if "binary/heart_scale |" in l)
    listing.write_text(line + "\n")
    env = dict(os.environ, LINSVM_DATA=str(data_dir()))
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "fetch_data.py"), "--datasets",
                           str(listing), "--dest", str(tmp_path / "data")], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "data" / "binary" / "heart_scale").is_symlink()
    # a wrong checksum is refused (and, offline, cannot be downloaded either)
    listing.write_text(line.replace(line.split(" | ")[4], "0" * 64) + "\n")
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "fetch_data.py"), "--datasets",
                           str(listing), "--dest", str(tmp_path / "data2")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "heart_scale" in proc.stderr
