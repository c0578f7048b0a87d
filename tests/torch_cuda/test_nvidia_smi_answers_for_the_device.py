"""``nvidia-smi`` in a child process answers for the device torch names, on both arms: SGLang sizes its memory by
``nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits`` and stops where the program is missing, as it
is on a CPU machine (emulated, each of these failed with FileNotFoundError before ``seam/torch_cuda/nvidia_smi.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import torch

from seam.torch_cuda import emulate_cuda


def _smi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=120)


def test_a_query_in_csv_names_the_device_torch_names(torch_cuda: str) -> None:
    done = _smi("--query-gpu=name,memory.total,uuid,compute_cap", "--format=csv,noheader,nounits", "-i", "0")
    assert done.returncode == 0, done.stderr
    name, total_mib, uuid, capability = [field.strip() for field in done.stdout.strip().split(",")]
    props = torch.cuda.get_device_properties(0)
    assert name == torch.cuda.get_device_name(0)
    assert int(total_mib) * 2**20 >= props.total_memory
    assert uuid == f"GPU-{props.uuid}"
    assert capability == "{}.{}".format(*torch.cuda.get_device_capability(0))


def test_a_query_with_its_header_and_units(torch_cuda: str) -> None:
    done = _smi("--query-gpu=name,memory.total,memory.used", "--format=csv", "-i", "0")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.strip().splitlines()
    assert header == "name, memory.total [MiB], memory.used [MiB]"
    assert row.endswith(" MiB") and row.startswith(torch.cuda.get_device_name(0) + ", ")


def test_the_device_list_and_an_unknown_field(torch_cuda: str) -> None:
    listed = _smi("-L").stdout.splitlines()
    assert listed[0] == f"GPU 0: {torch.cuda.get_device_name(0)} (UUID: GPU-{torch.cuda.get_device_properties(0).uuid})"
    refused = _smi("--query-gpu=no.such.field", "--format=csv")
    assert refused.returncode != 0 and '"no.such.field"' in refused.stdout + refused.stderr


def test_the_emulated_program_leaves_path_with_the_block() -> None:
    before = (os.environ.get("PATH"), shutil.which("nvidia-smi"))
    with emulate_cuda():
        assert shutil.which("nvidia-smi") != before[1]
    assert (os.environ.get("PATH"), shutil.which("nvidia-smi")) == before
