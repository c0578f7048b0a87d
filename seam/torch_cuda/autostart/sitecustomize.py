"""Start-up hook of a child interpreter under ``SEAM_EMULATE_CUDA=1``: emulate torch.cuda from the start.

``emulate_cuda()`` puts this folder first on ``PYTHONPATH``. A ``sitecustomize`` the environment has
of its own is run first, as if this one were not there.
"""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_other = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _other is not None and _other.loader is not None:
    _module = importlib.util.module_from_spec(_other)
    _other.loader.exec_module(_module)

if os.environ.get("SEAM_EMULATE_CUDA") == "1":
    from seam.torch_cuda import activate

    activate()
