"""``nvidia-smi`` of the emulated device: ``--query-gpu`` in CSV, ``-L``, ``-i`` and a summary, from the device's NVML.

Engines and scripts ask ``nvidia-smi`` in a child process (SGLang sizes its memory by ``nvidia-smi
--query-gpu=memory.total --format=csv,noheader,nounits`` and stops where it is missing). Inside ``emulate_cuda()``
the folder of ``seam/torch_cuda/bin/nvidia-smi`` is first on ``PATH`` (``install.py``), and that script runs this
module with the emulating interpreter. The answers are the emulated NVML's (``nvml.py``): one device, its name, UUID,
80 GiB, compute capability 9.0, the driver, constant idle sensors. The emulated device is each process's own, so
``nvidia-smi``, a process of its own, sees a device nobody uses: ``memory.used`` is 0 MiB, where a GPU's counts
every process's memory and the contexts'.

    nvidia-smi --query-gpu=name,memory.total --format=csv[,noheader][,nounits]
    nvidia-smi -L
"""

from __future__ import annotations

import sys
from typing import Callable

from seam.torch_cuda import device, nvml

_MIB = 2**20


def _fields() -> dict[str, tuple[str, Callable[[], object]]]:
    """Query field -> (unit, value); the unit is shown after the value and in the header (``[MiB]``)."""
    props = device.DeviceProperties()
    total = device.TOTAL_MEMORY // _MIB
    clocks = nvml.CLOCKS_MHZ
    table: dict[str, tuple[str, Callable[[], object]]] = {
        "index": ("", lambda: 0), "count": ("", lambda: 1), "name": ("", lambda: device.NAME),
        "gpu_name": ("", lambda: device.NAME), "uuid": ("", nvml.uuid), "gpu_uuid": ("", nvml.uuid),
        "driver_version": ("", lambda: nvml.DRIVER_VERSION), "pci.bus_id": ("", lambda: "00000000:00:00.0"),
        "compute_cap": ("", lambda: f"{props.major}.{props.minor}"),
        "memory.total": ("MiB", lambda: total), "memory.used": ("MiB", lambda: 0),
        "memory.free": ("MiB", lambda: total), "memory.reserved": ("MiB", lambda: 0),
        "temperature.gpu": ("", lambda: nvml.TEMPERATURE_C),
        "power.draw": ("W", lambda: f"{nvml.POWER_MW / 1000:.2f}"),
        "utilization.gpu": ("%", lambda: 0), "utilization.memory": ("%", lambda: 0),
        "clocks.gr": ("MHz", lambda: clocks[0]), "clocks.sm": ("MHz", lambda: clocks[1]),
        "clocks.mem": ("MHz", lambda: clocks[2]), "clocks.video": ("MHz", lambda: clocks[3]),
        "clocks.max.gr": ("MHz", lambda: clocks[0]), "clocks.max.sm": ("MHz", lambda: clocks[1]),
        "clocks.max.mem": ("MHz", lambda: clocks[2]),
        "persistence_mode": ("", lambda: "Enabled"), "pstate": ("", lambda: "P0"),
        "mig.mode.current": ("", lambda: "[N/A]"),
    }
    # nvidia-smi's longer names of the same clocks
    for long, short in (("graphics", "gr"), ("gr", "gr"), ("sm", "sm"), ("mem", "mem"), ("memory", "mem"),
                        ("video", "video")):
        table[f"clocks.current.{long}"] = table[f"clocks.{short}"]
    table["clocks.graphics"], table["clocks.max.graphics"] = table["clocks.gr"], table["clocks.max.gr"]
    return table


def _query(fields: list[str], options: set[str]) -> tuple[int, str]:
    table = _fields()
    unknown = next((f for f in fields if f not in table), None)
    if unknown is not None:
        return 2, f'Field "{unknown}" is not a valid field to query.\n'
    units = "nounits" not in options
    row = ", ".join(f"{table[f][1]()}" + (f" {table[f][0]}" if units and table[f][0] else "") for f in fields)
    header = ", ".join(f + (f" [{table[f][0]}]" if table[f][0] else "") for f in fields)
    return 0, (row + "\n" if "noheader" in options else f"{header}\n{row}\n")


def _summary() -> str:
    total = device.TOTAL_MEMORY // _MIB
    line = "+" + "-" * 89 + "+"
    return "\n".join([
        line,
        f"| NVIDIA-SMI {nvml.DRIVER_VERSION:<12} Driver Version: {nvml.DRIVER_VERSION:<12} "
        f"CUDA Version: {device.EMULATED_CUDA_VERSION:<6} (seamgate emulated)".ljust(90) + "|",
        line,
        f"|   0  {device.NAME:<40} {nvml.TEMPERATURE_C}C  {nvml.POWER_MW // 1000}W  0MiB / {total}MiB  0%".ljust(90)
        + "|",
        line, ""])


def run(argv: list[str]) -> tuple[int, str]:
    """(exit code, what nvidia-smi prints) for ``argv``."""
    fields: list[str] | None = None
    options: set[str] = {"csv"}
    listing = False
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, _, value = arg.partition("=")
        if name in ("--query-gpu", "--query-gpus"):
            fields = [f.strip() for f in (value or (args.pop(0) if args else "")).split(",") if f.strip()]
        elif name == "--format":
            options = {o.strip() for o in value.split(",") if o.strip()}
        elif name in ("-L", "--list-gpus"):
            listing = True
        elif name in ("-i", "--id"):
            chosen = value or (args.pop(0) if args else "")
            if chosen not in ("0", nvml.uuid(), "00000000:00:00.0"):
                return 6, "No devices were found\n"
        else:
            return 2, (f'Option "{arg}" is not recognized by seamgate\'s emulated nvidia-smi: it answers '
                       "--query-gpu=FIELDS --format=csv[,noheader][,nounits], -L and -i 0.\n")
    if listing:
        return 0, f"GPU 0: {device.NAME} (UUID: {nvml.uuid()})\n"
    if fields is not None:
        if "csv" not in options:
            return 2, "--query-gpu needs --format=csv\n"
        return _query(fields, options)
    return 0, _summary()


def main() -> None:
    code, text = run(sys.argv[1:])
    (sys.stderr if code == 2 else sys.stdout).write(text)  # a usage error on stderr; "No devices" on stdout
    raise SystemExit(code)


if __name__ == "__main__":
    main()
