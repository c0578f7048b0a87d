"""Code that asks NVML or the CUDA driver through ``ctypes`` (pynvml, torch's own NVML device count, vLLM's platform
check) gets the device's answers, on both arms: on a CPU machine neither library exists, and before
``shared_libraries.py`` each of these failed emulated (``NVMLError_LibraryNotFound``, ``OSError``). And
``CUDA_VISIBLE_DEVICES`` set by the program decides how many devices there are, read as CUDA initialises (PyTorch's
``test_lazy_init``: set after ``import torch``, before any CUDA call, it is obeyed; the emulated device was there
whatever it said), while the value a process starts with hides only the machine's GPUs.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from seam.torch_cuda import emulate_cuda
from seam.torch_cuda.device import COUNT_ASKS_THE_DRIVER

try:
    import pynvml
except ImportError:  # the test extra's nvidia-ml-py is missing: only the cases asking through it are skipped
    pynvml = None
#: The cases that ask NVML through pynvml (the rest ask through ctypes or torch alone, and run without it).
needs_pynvml = pytest.mark.skipif(pynvml is None, reason="nvidia-ml-py (NVML's bindings, as engines use them) is not "
                                                         "installed here: pip install -e '.[test]'")


@pytest.fixture(autouse=True)
def _pynvml_loads_its_library_afresh() -> None:
    """pynvml keeps the library it loaded, and each function it found, for the process: without this a case would
    use what an earlier case loaded and never load it itself, so the gate runner's reach of the case (the lines it
    ran) would miss the loading it depends on (docs/runner.md, "What an inferred cell assumes", (2))."""
    if pynvml is not None:
        pynvml.nvmlLib = None
        pynvml._nvmlGetFunctionPointer_cache.clear()


def _handle() -> object:
    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetHandleByIndex(torch.cuda._get_nvml_device_index(0))


@needs_pynvml
def test_nvml_names_the_device_torch_names(torch_cuda: str) -> None:
    handle = _handle()
    assert pynvml.nvmlDeviceGetCount() >= torch.cuda.device_count() >= 1
    assert pynvml.nvmlDeviceGetName(handle) == torch.cuda.get_device_name(0)
    uuid = pynvml.nvmlDeviceGetUUID(handle)
    assert uuid == f"GPU-{torch.cuda.get_device_properties(0).uuid}"
    assert pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByUUID(uuid)) == pynvml.nvmlDeviceGetIndex(handle)
    assert pynvml.nvmlDeviceGetCudaComputeCapability(handle) == torch.cuda.get_device_capability(0)
    assert pynvml.nvmlDeviceGetMemoryInfo(handle).total >= torch.cuda.get_device_properties(0).total_memory
    major = int(torch.version.cuda.split(".")[0])
    assert pynvml.nvmlSystemGetCudaDriverVersion() // 1000 >= major


@needs_pynvml
def test_torchs_readings_through_nvml_answer(torch_cuda: str) -> None:
    # PyTorch's test_temperature, test_power_draw, test_clock_speed, test_nvml_get_handler: on a GPU machine with
    # nvidia-ml-py they pass (H100, session 25); emulated they raised NVMLError_LibraryNotFound
    assert torch.cuda._get_pynvml_handler() is not None
    assert 0 <= torch.cuda.temperature() <= 150
    assert torch.cuda.power_draw() >= 0
    assert torch.cuda.clock_rate() >= 0
    assert 0 <= torch.cuda.utilization() <= 100
    assert 0 <= torch.cuda.memory_usage() <= 100


@needs_pynvml
def test_nvmls_used_memory_follows_the_caching_allocator(torch_cuda: str) -> None:
    # PyTorch's test_device_memory_used, its bounds
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.device_memory_used()
    held = torch.empty(512 * 2**20, dtype=torch.int8, device="cuda")
    torch.cuda.synchronize()
    grew = torch.cuda.device_memory_used() - before
    assert 2**24 <= grew <= 2**34
    del held


@needs_pynvml
def test_this_process_is_among_the_devices_compute_processes(torch_cuda: str) -> None:
    torch.ones(1, device="cuda")
    pids = [p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(_handle())]
    assert os.getpid() in pids
    assert str(os.getpid()) in torch.cuda.list_gpu_processes()


def test_torchs_own_nvml_device_count_is_the_devices(torch_cuda: str) -> None:
    # torch.cuda._device_count_nvml: ctypes over libnvidia-ml.so.1, CUDA_VISIBLE_DEVICES applied (here: unset)
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        pytest.skip("CUDA_VISIBLE_DEVICES is set for this run: the count it leaves is the test below")
    assert torch.cuda._device_count_nvml() == torch.cuda.device_count()


_CHILD = textwrap.dedent("""
    import ctypes, json, os, sys
    import torch
    out = {}
    def driver_count():
        n = ctypes.c_int(-1)
        return [ctypes.CDLL("libcuda.so.1").cuDeviceGetCount(ctypes.byref(n)), n.value]
    os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[1]  # after importing torch, before any CUDA call
    out["driver_before"] = driver_count()
    out["count"] = torch.cuda.device_count()  # through NVML before CUDA is initialised: the driver is not
    out["driver_after_count"] = driver_count()
    out["available"] = torch.cuda.is_available()  # the driver's count: it initialises the driver
    if out["available"]:
        out["driver_after_available"] = driver_count()
    try:
        torch.ones(1, device="cuda")
        out["tensor"] = "ok"
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # read once, as the driver initialised: the driver keeps its count
        out["driver_after_change"] = driver_count()
        out["available_after_change"] = torch.cuda.is_available()
        out["count_after_change"] = torch.cuda.device_count()  # by torch release: COUNT_ASKS_THE_DRIVER
    except RuntimeError as e:
        out["tensor"] = str(e).splitlines()[0]
    print(json.dumps(out))
""")


def _child(visible: str) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key != "CUDA_VISIBLE_DEVICES"}
    done = subprocess.run([sys.executable, "-c", _CHILD, visible], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("visible", ["", "32", "-1"])
def test_cuda_visible_devices_naming_no_device_leaves_none(torch_cuda: str, visible: str) -> None:
    seen = _child(visible)
    assert seen == {"driver_before": [3, -1], "count": 0, "driver_after_count": [3, -1], "available": False,
                    "tensor": "No CUDA GPUs are available"}


@pytest.mark.slow
def test_cuda_visible_devices_naming_the_device_keeps_it_and_is_read_once(torch_cuda: str) -> None:
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    for visible in ("0", f"GPU-{uuid[:8]}"):
        seen = _child(visible)
        # torch 2.11's device_count reads the variable again until its first count after initialising (H100,
        # session 35: 0 here), torch 2.13's asks the driver (1): the emulator follows the torch it runs on
        assert seen == {"driver_before": [3, -1], "count": 1, "driver_after_count": [3, -1], "available": True,
                        "driver_after_available": [0, 1], "tensor": "ok", "driver_after_change": [0, 1],
                        "available_after_change": True, "count_after_change": int(COUNT_ASKS_THE_DRIVER)}, visible


@needs_pynvml
def test_a_library_a_binding_kept_answers_as_the_real_one_after_the_block() -> None:
    """pynvml keeps the library it loaded for the process: after the block its calls go where a fresh load would."""
    original = ctypes.CDLL.__init__
    with emulate_cuda():
        pynvml.nvmlInit()
        assert pynvml.nvmlDeviceGetCount() >= 1
        pynvml.nvmlShutdown()
    assert ctypes.CDLL.__init__ is original
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        with pytest.raises(pynvml.NVMLError_LibraryNotFound):
            pynvml.nvmlInit()
    else:
        pynvml.nvmlInit()  # a GPU machine: the real library answers
        assert pynvml.nvmlDeviceGetCount() >= 1
        pynvml.nvmlShutdown()


@pytest.mark.slow
def test_the_value_a_process_starts_with_hides_the_machines_gpus_not_the_emulated_device() -> None:
    """CUDA_VISIBLE_DEVICES="" in a job's environment keeps work off the machine's GPUs (a CI job, the tutorial's
    test on the H200); the emulated device is not one of them, so a process emulating with it inherited has the
    device. Only a value the program sets itself while emulating is obeyed (the tests above)."""
    script = ("import torch; print(torch.cuda.device_count(), torch.cuda.is_available(), "
              "torch.ones(1, device='cuda').device)")
    with emulate_cuda():
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["1", "True", "cuda:0"]


@pytest.mark.parametrize("asks_the_driver", [True, False], ids=["torch-2.13", "torch-2.11"])
def test_the_count_after_initialising_follows_the_rule_of_the_torch_it_runs_on(monkeypatch, asks_the_driver) -> None:
    """torch 2.13's device_count asks the driver once CUDA is initialised; torch 2.11's reads CUDA_VISIBLE_DEVICES
    through NVML again until its first count after initialising (the H100, torch 2.11, counted 0 after the variable
    was emptied past initialisation). Each keeps that first count; is_available asks the driver in both."""
    from seam.torch_cuda import device

    monkeypatch.setattr(device, "COUNT_ASKS_THE_DRIVER", asks_the_driver)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    with emulate_cuda():
        torch.ones(1, device="cuda")
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
        assert torch.cuda.device_count() == int(asks_the_driver)
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
        assert torch.cuda.device_count() == int(asks_the_driver)  # the first count after initialising, kept
        assert torch.cuda.is_available()
