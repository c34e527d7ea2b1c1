"""The markers' guards of conftest.py: a test that reads the data sets, launches mpiexec or
starts a process without the marker for it fails, so that `-m "not data"`, `-m "not mpi"`
and `-m "not subprocess"` select suites that do none of these (and CI's run of `-m data`
without the data sets, where every such test skips, covers every test that reads them)."""
import subprocess
import sys

import pytest

from conftest import data_dir, mpiexec, shared_file


def test_reading_the_data_sets_without_the_data_marker_fails_the_test():
    for read in (data_dir, lambda: shared_file("binary/a9a")):
        with pytest.raises(pytest.fail.Exception, match=r"mark it @pytest.mark.data"):
            read()


def test_launching_mpiexec_without_the_mpi_marker_fails_the_test():
    with pytest.raises(pytest.fail.Exception, match=r"mark it @pytest.mark.mpi"):
        mpiexec()


def test_starting_a_process_without_the_subprocess_marker_fails_the_test():
    with pytest.raises(pytest.fail.Exception, match=r"mark it @pytest.mark.subprocess"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.subprocess
def test_a_subprocess_test_may_start_one():
    assert subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True,
                          text=True, check=True).stdout == "42\n"


def test_the_markers_are_registered(pytestconfig):
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {"data", "mpi", "subprocess", "slow"} <= registered
