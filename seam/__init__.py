"""The reference capture seam: backends, breakable graphs, the capture scope, step inputs, capture_one.

Its names load on first use (PEP 562): ``from seam import BreakableGraph`` imports ``seam.graph`` then, and
``import seam.arms`` (the arms registry, which imports nothing) loads no torch, so the harness can read the
registry where torch is not installed (a torch-free ``pip install seamgate`` runs ``seamgate --help``).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name and the module of the seam that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(('Backend', 'BackendStats', 'Event', 'Queue', 'RawGraph', 'TraceEntry'), "seam.backend"),
    **dict.fromkeys(('Captured', 'capture_one'), "seam.capture"),
    **dict.fromkeys(('CudaBackend',), "seam.cuda_backend"),
    **dict.fromkeys(('EagerBackend',), "seam.eager_backend"),
    **dict.fromkeys(('EmulatedBackend',), "seam.emulated_backend"),
    **dict.fromkeys((
        'AddressChangedError', 'BreakResultError', 'CaptureDependencyError', 'CaptureError',
        'CaptureInvalidatedError', 'CaptureStateError', 'CaptureSyncError', 'CaptureUnsupportedError',
        'CaptureWarmupError', 'PageableCopyError', 'StepInputError', 'UnjoinedForkError',
    ), "seam.errors"),
    **dict.fromkeys(('BreakableGraph',), "seam.graph"),
    **dict.fromkeys(('CaptureMode',), "seam.mode"),
    **dict.fromkeys(('is_capturing',), "seam.monitor"),
    **dict.fromkeys((
        'GraphCaptureScope', 'break_point', 'current_scope', 'note_fork', 'note_join',
    ), "seam.scope"),
    **dict.fromkeys(('GraphBreakStats', 'get_graph_break_stats', 'reset_graph_break_stats'), "seam.stats"),
    **dict.fromkeys((
        'PersistentStepInput', 'StepInputSource', 'StepInputStats', 'get_step_input_stats',
        'reset_step_input_stats',
    ), "seam.step_input"),
    **dict.fromkeys(('cudagraph_enabled', 'driver_graph_enabled'), "seam.switches"),
    **dict.fromkeys(('emulate_cuda', 'is_emulating'), "seam.torch_cuda"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'seam' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
