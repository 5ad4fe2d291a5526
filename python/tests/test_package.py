# The package itself: version from the CMake project, devices, the typed stub, and
# `python -m kafel` running the bundled CLI.
import os
import pathlib
import subprocess
import sys

import pytest

import kafel


def test_version_is_the_cmake_projects():
    root = pathlib.Path(__file__).resolve().parents[2]
    cmake = (root / "CMakeLists.txt").read_text()
    assert f"project(kafel VERSION {kafel.__version__} " in cmake


def test_devices_and_default_device(monkeypatch):
    devices = kafel.devices()
    assert devices[0].id == "cpu" and devices[0].backend == "cpu"
    cpu = kafel.Device("cpu")
    assert cpu == devices[0] and cpu.kernels and "f32" in cpu.gemm_types
    assert cpu.peak_gflops_f32 > 0 and '"id"' in cpu.json()
    monkeypatch.setenv("KAFEL_DEVICE", "cpu")
    assert kafel.Device().id == "cpu"


def test_the_stub_ships_with_the_module():
    stub = pathlib.Path(kafel._kafel.__file__).with_name("_kafel.pyi")
    assert stub.is_file() and "def gemm_host" in stub.read_text()


def test_python_m_kafel_runs_the_cli():
    from kafel.__main__ import cli_path

    if not cli_path().is_file():
        pytest.skip(f"this build has no CLI ({cli_path()})")
    run = subprocess.run([sys.executable, "-m", "kafel", "devices"], capture_output=True,
                         text=True, env=dict(os.environ), timeout=120)
    assert run.returncode == 0, run.stderr
    assert "cpu" in run.stdout


def test_python_m_kafel_passes_arguments_and_exit_code(tmp_path):
    fake = tmp_path / "kafel"
    fake.write_text("#!/bin/sh\necho \"args: $*\"\nexit 3\n")
    fake.chmod(0o755)
    run = subprocess.run([sys.executable, "-m", "kafel", "gemm", "--m", "8"], capture_output=True,
                         text=True, env={**os.environ, "KAFEL_CLI": str(fake)}, timeout=60)
    assert run.returncode == 3 and run.stdout.strip() == "args: gemm --m 8"
    missing = subprocess.run([sys.executable, "-m", "kafel"], capture_output=True, text=True,
                             env={**os.environ, "KAFEL_CLI": str(tmp_path / "none")}, timeout=60)
    assert missing.returncode == 2 and "not part of this build" in missing.stderr
