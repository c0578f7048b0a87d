"""The capture error family: every refusal of the seam derives from ``CaptureError``.

Each emulator refusal mirrors what real CUDA refuses (measured on an H200, see
``evidence/``), with an error of the same meaning, so a capture bug shows on a machine with no GPU.
"""

from __future__ import annotations


class CaptureError(RuntimeError):
    """Base of every error the seam raises about capture, replay or step inputs."""


class CaptureUnsupportedError(CaptureError):
    """The backend cannot capture (``EagerBackend``): callers must take the eager lane."""


class UnjoinedForkError(CaptureError):
    """A side queue forked into the capture was not joined back before the segment closed.

    Real CUDA: ``cudaErrorStreamCaptureUnjoined`` at ``cudaStreamEndCapture``.
    """


class CaptureSyncError(CaptureError):
    """A host synchronization (``.item()``, ``synchronize()``, a device-to-host read) inside capture.

    Real CUDA: the capture is invalidated (``cudaErrorStreamCaptureUnsupported``).
    """


class CaptureInvalidatedError(CaptureError):
    """An unsafe call (releasing another graph, a host sync) ran while a capture was open.

    Real CUDA, in its default global capture mode: the call fails with "operation not permitted
    when stream is capturing" and the open capture ends in "operation failed due to a previous error
    during capture" (``cudaErrorStreamCaptureInvalidated``).
    """


class CaptureDependencyError(CaptureError):
    """A capturing queue was made to wait on work recorded outside the capture (before it began).

    Real CUDA: "dependency created on uncaptured work in another stream"
    (``cudaErrorStreamCaptureIsolation``) at the wait.
    """


class CaptureWarmupError(CaptureError):
    """A library's first use (cuBLAS handle creation) happened inside a capture.

    Real CUDA: ``CUBLAS_STATUS_NOT_INITIALIZED`` at the first matmul captured before any ran
    eagerly. ``capture_one``'s warmups avoid it.
    """


class BreakResultError(CaptureError):
    """A PIECEWISE break returned a tensor: the next segment would bake the address of memory that
    is freed after capture, and each replay's break result lands elsewhere."""


class PageableCopyError(CaptureError):
    """A copy from pageable (non-pinned) host memory to the device inside capture.

    Real CUDA refuses it: an asynchronous host-to-device copy in a graph needs pinned memory.
    """


class AddressChangedError(CaptureError):
    """A replay was asked to read an input whose address differs from the captured one.

    A captured graph bakes the addresses it read; a replay against a moved input would silently
    read the OLD buffer. vLLM checks this only under DEBUG logging; the seam always does.
    """


class CaptureStateError(CaptureError):
    """The raw capture pair was used out of order (end without begin, replay of a destroyed graph...)."""


class StepInputError(CaptureError):
    """A persistent step input was misused: unbound, over capacity, wrong dtype."""
