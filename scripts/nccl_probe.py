"""What ``torch.distributed`` with NCCL does on one device (one rank): collectives, eagerly and in a capture.

One process group of one rank: its collectives eagerly and inside a CUDA graph capture, and what it refuses, in
which words. The ``library_*`` cases call NCCL's own library through ``ctypes`` (``libnccl.so.2``, as vLLM's
``PyNcclCommunicator`` does): a communicator of one rank, its calls on device pointers, eagerly and in a capture.
The ``legacy_stream_*`` cases ask the question the library's call on stream 0 asks of any kernel: work on the legacy
default stream while a capture of each mode is open on a side stream.

Plain torch on a GPU machine (``python3 scripts/nccl_probe.py``), or on the emulated device here
(``PYTHONPATH=$PWD python scripts/nccl_probe.py --emulated``); one JSON line per case, each case in a child process of
its own (a failed capture can leave a process's CUDA state unusable). Compare two runs with
``python scripts/compare_probe_lines.py GPU.jsonl EMULATED.jsonl``.
"""
import gc
import json
import os
import subprocess
import sys
import warnings


def _world(backend="nccl", **kwargs):
    import torch.distributed as dist
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, **kwargs)
    return dist


def _capture(body, warm=None):
    """``body`` captured on a side stream after ``warm`` ran there once; the graph."""
    import torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    if warm is not None:
        with torch.cuda.stream(s):
            warm()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    _phase("capture")
    with torch.cuda.graph(g):
        body()
    _phase("replay")
    return g


PHASE = ["setup", ""]  # the phase a case reached; [1]: the case a partial line names


def _phase(name):
    PHASE[0] = name


def case_available():
    import torch.distributed as dist
    import torch
    try:
        version = str(torch.cuda.nccl.version())
    except Exception as e:  # noqa: BLE001 - the probe reports what was raised
        version = f"{type(e).__name__}: {e}"
    return {"nccl": dist.is_nccl_available(), "backend_nccl": dist.is_backend_available("nccl"),
            "gloo": dist.is_gloo_available(), "has_class": hasattr(dist, "ProcessGroupNCCL"),
            "nccl_version": version}


def case_init_default_backend():
    import torch
    dist = _world(None)
    pg = dist.group.WORLD
    return {"backend": str(dist.get_backend()), "config": str(dist.get_backend_config()),
            "world": dist.get_world_size(), "rank": dist.get_rank(),
            "cuda_backend": pg._get_backend(torch.device("cuda")).__class__.__name__}


def case_init_nccl():
    import torch
    dist = _world()
    pg = dist.group.WORLD
    return {"backend": str(dist.get_backend()), "config": str(dist.get_backend_config()),
            "is_nccl": dist.get_backend() == dist.Backend.NCCL,
            "cuda_backend": pg._get_backend(torch.device("cuda")).__class__.__name__,
            "initialized": dist.is_initialized(), "pg_name": pg.name(),
            "backend_name": pg._get_backend(torch.device("cuda")).name(),
            "supports_splitting": pg._get_backend(torch.device("cuda")).supports_splitting,
            "options": type(pg._get_backend(torch.device("cuda")).options).__name__}


def case_allreduce_ops():
    import torch
    dist = _world()
    out = {}
    for name in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
        x = torch.arange(1.0, 5.0, device="cuda")
        dist.all_reduce(x, op=getattr(dist.ReduceOp, name))
        out[name] = x.tolist()
    x = torch.arange(4, device="cuda")
    dist.all_reduce(x)
    out["int64"] = x.tolist()
    out["device"] = str(x.device)
    return out


def case_allreduce_host_tensor():
    import torch
    dist = _world()
    x = torch.ones(3)
    dist.all_reduce(x)
    return x.tolist()


def case_mixed_backends_host_and_device():
    import torch
    dist = _world("cpu:gloo,cuda:nccl")
    h = torch.ones(3)
    d = torch.ones(3, device="cuda")
    dist.all_reduce(h)
    dist.all_reduce(d)
    return {"host": h.tolist(), "device": d.tolist(), "backend": str(dist.get_backend())}


def case_gloo_device_tensor():
    import torch
    dist = _world("gloo")
    d = torch.arange(3.0, device="cuda")
    dist.all_reduce(d)
    return d.tolist()


def case_collectives():
    import torch
    dist = _world()
    x = torch.arange(4.0, device="cuda")
    dist.broadcast(x, src=0)
    out = torch.empty(4, device="cuda")
    dist.all_gather_into_tensor(out, x)
    rs = torch.empty(4, device="cuda")
    dist.reduce_scatter_tensor(rs, x * 2)
    lst = [torch.empty(4, device="cuda")]
    dist.all_gather(lst, x + 1)
    a2a = torch.empty(4, device="cuda")
    dist.all_to_all_single(a2a, x + 2)
    red = x.clone()
    dist.reduce(red, dst=0)
    objs = [None]
    dist.all_gather_object(objs, {"a": 1})
    bl = [3]
    dist.broadcast_object_list(bl, src=0)
    return {"broadcast": x.tolist(), "all_gather_into_tensor": out.tolist(), "reduce_scatter": rs.tolist(),
            "all_gather": lst[0].tolist(), "all_to_all": a2a.tolist(), "reduce": red.tolist(), "objects": objs,
            "broadcast_objects": bl}


def case_barrier():
    import torch
    dist = _world()
    torch.ones(1, device="cuda")
    dist.barrier()
    return "barrier"


def case_async_work():
    import torch
    dist = _world()
    x = torch.ones(3, device="cuda")
    work = dist.all_reduce(x, async_op=True)
    waited = work.wait()
    return {"waited": waited, "completed": work.is_completed(), "x": x.tolist()}


def case_capture_after_warmup():
    import torch
    dist = _world()
    x = torch.ones(4, device="cuda")
    box = {}

    def body():
        y = x * 2
        dist.all_reduce(y)
        box["z"] = y + 1
    g = _capture(body, warm=body)
    x.fill_(3.0)
    g.replay()
    torch.cuda.synchronize()
    first = box["z"].tolist()
    x.fill_(5.0)
    g.replay()
    torch.cuda.synchronize()
    return {"first": first, "second": box["z"].tolist()}


def _first_collective_captured(**world):
    """The group's first collective inside a capture, then a replay."""
    import torch
    dist = _world(**world)
    x = torch.ones(4, device="cuda")
    g = _capture(lambda: dist.all_reduce(x))
    x.fill_(2.0)
    g.replay()
    torch.cuda.synchronize()
    return x.tolist()


def case_capture_first_collective():
    return _first_collective_captured()


def case_capture_first_collective_bound_device():
    import torch
    return _first_collective_captured(device_id=torch.device("cuda", 0))


def case_capture_barrier():
    import torch
    dist = _world()
    x = torch.ones(4, device="cuda")
    dist.all_reduce(x)
    _capture(lambda: dist.barrier())
    return "captured"


def case_capture_async_wait():
    import torch
    dist = _world()
    x = torch.ones(4, device="cuda")

    def body():
        dist.all_reduce(x, async_op=True).wait()
        x.add_(1)
    g = _capture(body, warm=body)
    x.fill_(0.0)
    g.replay()
    torch.cuda.synchronize()
    return x.tolist()


def case_capture_gloo_device_tensor():
    import torch
    dist = _world("gloo")
    x = torch.ones(4, device="cuda")
    dist.all_reduce(x)
    _capture(lambda: dist.all_reduce(x))
    return "captured"


def case_capture_host_tensor_collective_mixed():
    import torch
    dist = _world("cpu:gloo,cuda:nccl")
    h = torch.ones(2)
    d = torch.ones(2, device="cuda")
    dist.all_reduce(d)
    box = {}

    def body():
        dist.all_reduce(h)
        box["d"] = d + 1
    g = _capture(body)
    g.replay()
    torch.cuda.synchronize()
    return {"host": h.tolist(), "device": box["d"].tolist()}


def case_functional_all_reduce():
    import torch
    import torch.distributed._functional_collectives as funcol
    dist = _world()
    x = torch.arange(3.0, device="cuda")
    y = funcol.all_reduce(x, "sum", dist.group.WORLD)
    return {"y": y.tolist(), "type": type(y).__name__}


def case_functional_all_reduce_in_capture():
    import torch
    import torch.distributed._functional_collectives as funcol
    dist = _world()
    x = torch.ones(3, device="cuda")
    box = {}

    def body():
        box["y"] = funcol.all_reduce(x * 3, "sum", dist.group.WORLD) + 0
    g = _capture(body, warm=body)
    x.fill_(2.0)
    g.replay()
    torch.cuda.synchronize()
    return box["y"].tolist()


def case_new_group():
    import torch
    dist = _world()
    sub = dist.new_group([0], backend="nccl")
    x = torch.full((2,), 7.0, device="cuda")
    dist.all_reduce(x, group=sub)
    return {"backend": str(dist.get_backend(sub)), "x": x.tolist(), "ranks": dist.get_process_group_ranks(sub)}


def case_bound_device_id():
    import torch
    dist = _world(device_id=torch.device("cuda", 0))
    x = torch.ones(2, device="cuda")
    dist.all_reduce(x)
    sub = dist.new_group([0])
    y = torch.ones(2, device="cuda")
    dist.all_reduce(y, group=sub)
    return {"x": x.tolist(), "y": y.tolist(), "bound": str(dist.group.WORLD.bound_device_id)}


def case_send_to_self():
    import torch
    dist = _world()
    dist.send(torch.ones(2, device="cuda"), dst=0)
    return "sent"


def case_destroy_and_again():
    import torch
    dist = _world()
    dist.all_reduce(torch.ones(1, device="cuda"))
    dist.destroy_process_group()
    after = dist.is_initialized()
    dist = _world()
    x = torch.ones(1, device="cuda")
    dist.all_reduce(x)
    return {"after_destroy": after, "x": x.tolist()}


def case_all_reduce_coalesced_and_complex():
    import torch
    dist = _world()
    c = torch.ones(2, dtype=torch.complex64, device="cuda")
    dist.all_reduce(c)
    b = torch.ones(2, dtype=torch.bfloat16, device="cuda")
    dist.all_reduce(b)
    return {"complex": [str(v) for v in c.tolist()], "bf16": b.tolist()}


def _library():
    """``libnccl.so.2`` through ``ctypes`` with the signatures ``nccl.h`` declares, and a communicator of one rank."""
    import ctypes
    import torch
    torch.zeros(1, device="cuda")

    class UniqueId(ctypes.Structure):
        _fields_ = [("internal", ctypes.c_byte * 128)]

    lib = ctypes.CDLL("libnccl.so.2")
    p, i, n = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    for name, args in {"ncclGetVersion": [ctypes.POINTER(i)], "ncclGetUniqueId": [ctypes.POINTER(UniqueId)],
                       "ncclCommInitRank": [ctypes.POINTER(p), i, UniqueId, i],
                       "ncclAllReduce": [p, p, n, i, i, p, p]}.items():
        getattr(lib, name).restype, getattr(lib, name).argtypes = i, args
    lib.ncclGetErrorString.restype, lib.ncclGetErrorString.argtypes = ctypes.c_char_p, [i]

    def communicator():
        uid, comm = UniqueId(), p()
        assert lib.ncclGetUniqueId(ctypes.byref(uid)) == 0
        code = lib.ncclCommInitRank(ctypes.byref(comm), 1, uid, 0)
        return comm, code
    return lib, communicator


def case_library_version_and_words():
    import ctypes
    lib, _ = _library()
    version = ctypes.c_int()
    return {"code": lib.ncclGetVersion(ctypes.byref(version)), "version": version.value,
            "words": [lib.ncclGetErrorString(code).decode() for code in range(9)]}


def _library_all_reduce_captured(warm):
    import torch
    lib, communicator = _library()
    comm, _ = communicator()
    x = torch.ones(4, device="cuda")
    codes = []

    def body():
        codes.append(lib.ncclAllReduce(x.data_ptr(), x.data_ptr(), 4, 7, 0, comm,
                                       torch.cuda.current_stream().cuda_stream))
    g = _capture(body, warm=body if warm else None)
    x.fill_(2.0)
    g.replay()
    torch.cuda.synchronize()
    return {"codes": codes, "x": x.tolist()}


def case_library_capture_after_warmup():
    return _library_all_reduce_captured(True)


def case_library_capture_first_call():
    return _library_all_reduce_captured(False)


def case_library_comm_made_in_capture():
    lib, communicator = _library()
    made = []
    _capture(lambda: made.append(communicator()[1]))
    return {"init": made}


def _stepper(steps):
    """``step(name, fn)``: ``fn``'s value (or what it raised) into ``steps`` under ``name``, then a partial line (the
    case ``_one`` runs), so a process that dies shows how far it got."""
    def step(name, fn):
        try:
            value = fn()
            steps[name] = "ok" if value is None else value
        except Exception as e:  # noqa: BLE001 - the probe reports what was raised
            steps[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        print(json.dumps({"case": PHASE[1], "ok": False, "partial": True, "value": dict(steps)}), flush=True)
    return step


def _side_stream():
    """A fresh stream after the current one's work, the device idle."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.cuda.synchronize()
    return side


def _capture_nothing(mode):
    """An empty capture of ``mode`` on a fresh stream, its graph reset (``seam.cuda_backend.end_generator_capture``'s
    way of ending the default generator's capture)."""
    import torch
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(torch.cuda.Stream()):
        g.capture_begin(capture_error_mode=mode)
        g.capture_end()
    g.reset()


def _collect():
    """The graphs no one holds, freed (a graph freed unregistered ended the H100's process: session 40)."""
    gc.collect()


def _after_a_refused_comm(refuse):
    """Session 40: after ``ncclCommInitRank`` was refused inside a capture on the H100, a later capture_begin on a
    fresh stream was refused "operation not permitted when stream is capturing" and a graph freed after it ended the
    process (``~CUDAGraph``: "The graph should be registered to the state"). Each step's outcome, in order."""
    import torch
    lib, communicator = _library()
    steps = {}
    step = _stepper(steps)
    side, graph = _side_stream(), torch.cuda.CUDAGraph()  # the refused graph lives to the case's end

    def made_in_a_capture():
        codes = []
        with torch.cuda.graph(graph, stream=side):
            codes.append(communicator()[1])
        return codes
    if refuse:
        step("comm_made_in_a_capture", made_in_a_capture)

    def capturing(stream):
        with torch.cuda.stream(stream):
            return torch.cuda.is_current_stream_capturing()
    step("side_stream_capturing", lambda: capturing(side))
    step("default_stream_capturing", lambda: torch.cuda.is_current_stream_capturing())
    step("synchronize", torch.cuda.synchronize)
    step("draw", lambda: torch.randn(2, device="cuda").shape[0])
    step("relaxed_capture_on_a_fresh_stream", lambda: _capture_nothing("relaxed"))
    step("global_capture_on_a_fresh_stream", lambda: _capture_nothing("global"))
    step("free_the_graphs", _collect)
    return steps


def _refused_end_then_default_stream_begin(refusal):
    """The refused-begin test file's first steps after a refused capture end (session 40: on the H100 the process
    ended after NCCL's refused communicator): a begin refused on the default stream, then a relaxed capture on a fresh
    stream (``seam.cuda_backend.end_generator_capture``), then the graphs freed; after the refusal, first such a
    relaxed capture (the test's own ``end_generator_capture``). ``refusal``: "comm" (NCCL's
    communicator made in a capture), "host_read" (``item()`` in a capture), "side_stream_current" (no refusal; the
    side stream made current, as ``torch.cuda.graph``'s refused ``__exit__`` leaves it) or None."""
    import torch
    steps = {}
    step = _stepper(steps)
    x = torch.ones(2, device="cuda")
    side, graph = _side_stream(), torch.cuda.CUDAGraph()  # the refused graph lives to the case's end
    body = {"comm": lambda: _library()[1]()[1], "host_read": lambda: x.sum().item()}.get(refusal)
    if refusal == "side_stream_current":  # what torch.cuda.graph's refused end leaves: its stream current
        torch.cuda.set_stream(side)

    def refused():
        with torch.cuda.graph(graph, stream=side):
            try:
                body()
            except RuntimeError:
                pass
    if body is not None:
        step(f"refused_end_after_{refusal}", refused)
        step("relaxed_capture_ends_the_generators_capture", lambda: _capture_nothing("relaxed"))
    step("draw", lambda: torch.randn(2, device="cuda").shape[0])
    step("begin_on_the_default_stream", lambda: torch.cuda.CUDAGraph().capture_begin())
    step("free_the_graphs", _collect)
    step("relaxed_capture_on_a_fresh_stream", lambda: _capture_nothing("relaxed"))
    step("free_the_graphs_again", _collect)
    step("draw_again", lambda: torch.randn(2, device="cuda").shape[0])
    return steps


def case_refused_comm_then_default_stream_begin():
    return _refused_end_then_default_stream_begin("comm")


def case_refused_host_read_then_default_stream_begin():
    return _refused_end_then_default_stream_begin("host_read")


def case_side_stream_current_then_default_stream_begin():
    return _refused_end_then_default_stream_begin("side_stream_current")


def case_default_stream_begin_alone():
    return _refused_end_then_default_stream_begin(None)


def case_library_comm_refused_then_graphs():
    return _after_a_refused_comm(True)


def case_library_no_refusal_then_graphs():
    return _after_a_refused_comm(False)


def case_library_legacy_stream_in_capture():
    import torch
    lib, communicator = _library()
    comm, _ = communicator()
    x = torch.ones(4, device="cuda")
    lib.ncclAllReduce(x.data_ptr(), x.data_ptr(), 4, 7, 0, comm, None)
    codes = []
    _capture(lambda: codes.append(lib.ncclAllReduce(x.data_ptr(), x.data_ptr(), 4, 7, 0, comm, None)))
    return {"codes": codes}


def case_library_refused_arguments():
    import torch
    lib, communicator = _library()
    comm, _ = communicator()
    x = torch.ones(4, device="cuda")
    s = torch.cuda.current_stream().cuda_stream
    return {"datatype": lib.ncclAllReduce(x.data_ptr(), x.data_ptr(), 4, 99, 0, comm, s),
            "op": lib.ncclAllReduce(x.data_ptr(), x.data_ptr(), 4, 7, 99, comm, s)}


def case_library_pinned_host_pointer():
    import torch
    lib, communicator = _library()
    comm, _ = communicator()
    h = torch.ones(4).pin_memory()
    code = lib.ncclAllReduce(h.data_ptr(), h.data_ptr(), 4, 7, 0, comm, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    return {"code": code, "x": h.tolist()}


def case_library_no_elements_null_pointer():
    """An all-reduce of an empty tensor (its data_ptr() NULL) into another buffer: the code, and whether a capture of
    it records anything (the warning "The CUDA Graph is empty" counted)."""
    import warnings
    import torch
    lib, communicator = _library()
    comm, _ = communicator()
    empty, out = torch.empty(0, device="cuda"), torch.full((2,), -1.0, device="cuda")
    s = torch.cuda.current_stream().cuda_stream
    code = lib.ncclAllReduce(empty.data_ptr(), out.data_ptr(), 0, 7, 0, comm, s)
    captured = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _capture(lambda: captured.append(lib.ncclAllReduce(empty.data_ptr(), out.data_ptr(), 0, 7, 0, comm,
                                                           torch.cuda.current_stream().cuda_stream)))
    torch.cuda.synchronize()
    return {"ptr": empty.data_ptr(), "code": code, "captured": captured, "out": out.tolist(),
            "empty_graph_warned": any("The CUDA Graph is empty" in str(w.message) for w in seen)}


def _legacy_stream_kernel(mode):
    import torch
    x = torch.ones(4, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    _phase("capture")
    with torch.cuda.graph(g, capture_error_mode=mode):
        y = x * 2
        with torch.cuda.stream(torch.cuda.default_stream()):
            x.add_(1)
    _phase("replay")
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    return {"x": x.tolist(), "y": y.tolist()}


def case_legacy_stream_kernel_in_a_global_capture():
    return _legacy_stream_kernel("global")


def case_legacy_stream_kernel_in_a_thread_local_capture():
    return _legacy_stream_kernel("thread_local")


def case_legacy_stream_kernel_in_a_relaxed_capture():
    return _legacy_stream_kernel("relaxed")


def _direct_calls():
    """Each of ``torch.cuda.nccl``'s direct calls on one device's tensors (a list of one, as a process with one GPU
    gives), into fresh outputs: ``{name: (call, outputs)}``."""
    import torch
    import torch.cuda.nccl as nccl
    x = torch.arange(1.0, 5.0, device="cuda")
    outs = {"all_reduce": [torch.zeros(4, device="cuda")], "reduce": [torch.zeros(4, device="cuda")],
            "all_gather": [torch.zeros(4, device="cuda")], "reduce_scatter": [torch.zeros(4, device="cuda")]}
    calls = {"all_reduce": lambda: nccl.all_reduce([x], outs["all_reduce"]),
             "reduce": lambda: nccl.reduce([x], outs["reduce"][0], root=0),
             "all_gather": lambda: nccl.all_gather([x], outs["all_gather"]),
             "reduce_scatter": lambda: nccl.reduce_scatter([x], outs["reduce_scatter"])}
    return x, calls, outs


def case_direct_calls_eager():
    """``torch.cuda.nccl``'s direct calls (tensor lists, one per device; what ``torch.nn.parallel`` uses) on one
    device, eagerly: availability, each call's values, in place and into outputs, a communicator made by hand."""
    import torch
    import torch.cuda.nccl as nccl
    steps = {}
    step = _stepper(steps)
    x, calls, outs = _direct_calls()
    step("is_available", lambda: nccl.is_available([x]))
    step("is_available_host", lambda: nccl.is_available([x.cpu()]))
    for name, call in calls.items():
        step(name, lambda call=call, name=name: (call(), [o.tolist() for o in outs[name]])[1])
    y = torch.arange(4, device="cuda", dtype=torch.int32)
    step("all_reduce_in_place_int", lambda: (nccl.all_reduce([y]), y.tolist())[1])
    step("broadcast", lambda: (nccl.broadcast([y], root=0), y.tolist())[1])
    step("reduce_max", lambda: (nccl.all_reduce([y], op=2), y.tolist())[1])
    step("unique_id", lambda: [type(nccl.unique_id()).__name__, len(nccl.unique_id())])
    step("init_rank", lambda: type(nccl.init_rank(1, nccl.unique_id(), 0)).__name__)
    step("input_unchanged", lambda: x.tolist())
    return steps


def case_direct_calls_refused():
    """What the direct calls refuse, and in which words."""
    import torch
    import torch.cuda.nccl as nccl
    steps = {}
    step = _stepper(steps)
    x = torch.ones(4, device="cuda")
    step("host_tensor", lambda: nccl.all_reduce([torch.ones(4)]))
    step("two_on_one_device", lambda: nccl.all_reduce([x, torch.ones(4, device="cuda")]))
    step("not_contiguous", lambda: nccl.all_reduce([torch.ones(4, 4, device="cuda").t()]))
    step("output_size", lambda: nccl.all_reduce([x], [torch.ones(3, device="cuda")]))
    step("output_dtype", lambda: nccl.all_reduce([x], [torch.ones(4, device="cuda", dtype=torch.float64)]))
    step("all_gather_size", lambda: nccl.all_gather([x], [torch.ones(3, device="cuda")]))
    step("empty_list", lambda: nccl.all_reduce([]))
    step("a_tensor_not_a_list", lambda: nccl.all_reduce(x))
    step("root_out_of_range", lambda: nccl.broadcast([x], root=1))
    step("complex_dtype", lambda: nccl.all_reduce([torch.zeros(4, device="cuda", dtype=torch.complex64)]))
    return steps


def case_direct_calls_first_in_capture():
    """A process's first direct call inside a capture (torch makes the device list's communicators at the first
    call), then a replay."""
    import torch
    import torch.cuda.nccl as nccl
    x = torch.ones(4, device="cuda")
    y = torch.zeros(4, device="cuda")
    g = _capture(lambda: nccl.all_reduce([x], [y]))
    x.fill_(3.0)
    g.replay()
    torch.cuda.synchronize()
    return y.tolist()


def case_direct_calls_captured_after_warmup():
    """Each direct call warmed up, then captured into fresh outputs; the inputs changed; each graph replayed."""
    import torch
    steps = {}
    step = _stepper(steps)
    x, calls, outs = _direct_calls()
    for name, call in calls.items():
        def captured(name=name, call=call):
            g = _capture(call, warm=call)
            x.add_(10.0)
            for o in outs[name]:
                o.zero_()
            g.replay()
            torch.cuda.synchronize()
            return [o.tolist() for o in outs[name]]
        step(name, captured)
    return steps


def case_direct_calls_in_place_captured():
    """An in-place all-reduce and a broadcast of one device's tensor captured after a warm-up: is anything recorded
    (the one-rank path may launch nothing), and what a replay leaves."""
    import torch
    import torch.cuda.nccl as nccl
    steps = {}
    step = _stepper(steps)
    x = torch.arange(4.0, device="cuda")
    def in_place():
        g = _capture(lambda: (nccl.all_reduce([x]), nccl.broadcast([x])), warm=lambda: nccl.all_reduce([x]))
        x.fill_(7.0)
        g.replay()
        torch.cuda.synchronize()
        return x.tolist()
    step("in_place", in_place)
    return steps


def case_comm_broadcast_first_in_capture():
    """``torch.cuda.comm.broadcast`` of a device tensor to its own device, a process's first inside a capture: on a
    CUDA build with NCCL it is an in-place NCCL broadcast of the tensor alone, whose communicator torch makes at the
    first call (refused in a capture?), then a second broadcast outside."""
    import torch
    import torch.cuda.comm as comm
    steps = {}
    step = _stepper(steps)
    x = torch.ones(4, device="cuda")

    def first_in_capture():
        _capture(lambda: comm.broadcast(x, [0]))  # the graph is no value for a JSON line
    step("first_in_capture", first_in_capture)
    step("then_outside", lambda: comm.broadcast(x, [0])[0] is x)
    return steps


def case_comm_and_data_parallel_one_device():
    """``torch.cuda.comm`` and ``torch.nn.DataParallel`` on one device, eagerly: what each call gives back."""
    import torch
    import torch.cuda.comm as comm
    steps = {}
    step = _stepper(steps)
    x = torch.arange(6.0, device="cuda").reshape(3, 2)
    step("scatter_is_a_view", lambda: comm.scatter(x, [0])[0].data_ptr() == x.data_ptr())
    step("scatter_from_host", lambda: [str(t.device) for t in comm.scatter(x.cpu(), [0])])
    step("scatter_to_device_1", lambda: len(comm.scatter(x, [0, 1])))
    step("gather", lambda: comm.gather([x, x], 0, 0).tolist())
    step("gather_host_input", lambda: comm.gather([x.cpu()], 0, 0))
    step("broadcast_is_the_source", lambda: comm.broadcast(x, [0])[0] is x)
    step("to_cuda_1", lambda: str(x.to("cuda:1").device))
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 2).cuda()
    step("data_parallel", lambda: torch.equal(torch.nn.DataParallel(model, device_ids=[0])(x), model(x)))
    return steps


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def _one(name, emulated):
    PHASE[1] = name
    if emulated:
        from seam.torch_cuda import emulate_cuda
        emulate_cuda().__enter__()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            row = {"case": name, "ok": True, "value": CASES[name]()}
        except Exception as e:  # noqa: BLE001 - the probe reports what was raised
            row = {"case": name, "ok": False, "phase": PHASE[0],
                   "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
    row["warnings"] = sorted({str(w.message).splitlines()[0][:120] for w in seen})
    print(json.dumps(row), flush=True)


def main():
    emulated = "--emulated" in sys.argv
    if "--case" in sys.argv:
        _one(sys.argv[sys.argv.index("--case") + 1], emulated)
        return
    for name in CASES:
        cmd = [sys.executable, __file__, "--case", name] + (["--emulated"] if emulated else [])
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=os.environ.copy())
        except subprocess.TimeoutExpired:
            print(json.dumps({"case": name, "ok": False, "error": "timed out after 120 s"}), flush=True)
            continue
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if lines:
            print(lines[-1], flush=True)
        else:
            tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1][:200]
            print(json.dumps({"case": name, "ok": False, "error": f"exit {done.returncode}: {tail}"}), flush=True)


if __name__ == "__main__":
    main()
