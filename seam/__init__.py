"""The reference capture seam: backends, breakable graphs, the capture scope, step inputs, capture_one."""

from seam.backend import Backend, BackendStats, Event, Queue, RawGraph, TraceEntry
from seam.capture import Captured, capture_one
from seam.cuda_backend import CudaBackend
from seam.eager_backend import EagerBackend
from seam.emulated_backend import EmulatedBackend
from seam.errors import (
    AddressChangedError,
    BreakResultError,
    CaptureDependencyError,
    CaptureError,
    CaptureInvalidatedError,
    CaptureStateError,
    CaptureSyncError,
    CaptureUnsupportedError,
    CaptureWarmupError,
    PageableCopyError,
    StepInputError,
    UnjoinedForkError,
)
from seam.graph import BreakableGraph
from seam.mode import CaptureMode
from seam.monitor import is_capturing
from seam.scope import GraphCaptureScope, break_point, current_scope, note_fork, note_join
from seam.stats import GraphBreakStats, get_graph_break_stats, reset_graph_break_stats
from seam.step_input import (
    PersistentStepInput,
    StepInputSource,
    StepInputStats,
    get_step_input_stats,
    reset_step_input_stats,
)
from seam.switches import cudagraph_enabled, driver_graph_enabled

__all__ = [
    "AddressChangedError", "Backend", "BreakResultError", "CaptureDependencyError", "CaptureWarmupError", "BackendStats", "BreakableGraph", "CaptureError", "CaptureInvalidatedError", "CaptureMode",
    "CaptureStateError", "CaptureSyncError", "CaptureUnsupportedError", "Captured", "CudaBackend",
    "EagerBackend", "EmulatedBackend", "Event", "GraphBreakStats", "GraphCaptureScope",
    "PageableCopyError", "PersistentStepInput", "Queue", "RawGraph", "StepInputError",
    "StepInputSource", "StepInputStats", "TraceEntry", "UnjoinedForkError", "break_point",
    "capture_one", "cudagraph_enabled", "current_scope", "driver_graph_enabled",
    "get_graph_break_stats", "get_step_input_stats", "is_capturing", "note_fork", "note_join",
    "reset_graph_break_stats", "reset_step_input_stats",
]
