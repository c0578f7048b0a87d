"""How torch's device-generic ``torch.Stream`` and ``torch.Event`` meet ``torch.cuda``'s: per case, a value or an error.

Plain torch on a GPU machine (``python3 scripts/generic_stream_probe.py``), or on the emulated device here
(``--emulated``); one JSON line per case, addresses and stream ids replaced by N. Compare two runs with
``scripts/compare_probe_lines.py``. ``seam/torch_cuda/generic.py`` follows the GPU's answers.
"""
import json, re, sys
import torch
if "--emulated" in sys.argv:
    from seam.torch_cuda import emulate_cuda
    emulate_cuda().__enter__()


def name(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def public(obj):
    return sorted(a for a in dir(obj) if not a.startswith("_"))


def restored(call):
    before = torch.cuda.current_stream()
    try:
        return call()
    finally:
        torch.cuda.set_stream(before)


def in_stream_context(stream, make_context):
    with make_context(stream):
        now = torch.cuda.current_stream()
        return [name(now), now.stream_id == stream.stream_id, name(torch.accelerator.current_stream())]


def capture_on(stream):
    graph, x = torch.cuda.CUDAGraph(), torch.ones(4, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=stream):
        y = x * 2
        inside = [torch.cuda.is_current_stream_capturing(), name(torch.cuda.current_stream())]
    x.fill_(3.0)
    graph.replay()
    torch.cuda.synchronize()
    return inside + [y.tolist()]


def timed_pair():
    start, end = torch.Event(device="cuda", enable_timing=True), torch.Event(device="cuda", enable_timing=True)
    start.record()
    torch.ones(64, device="cuda").sum()
    end.record()
    end.synchronize()
    return [name(start), start.elapsed_time(end) >= 0, start.query()]


a, c = torch.accelerator.current_stream(), torch.cuda.current_stream()
side = torch.cuda.Stream()
g = torch.Stream(device="cuda")
cases = {
    "accelerator_current_type": lambda: name(a), "cuda_current_type": lambda: name(c),
    "accelerator_eq_cuda": lambda: a == c, "cuda_eq_accelerator": lambda: c == a,
    "accelerator_eq_accelerator": lambda: a == torch.accelerator.current_stream(),
    "accelerator_ne_cuda": lambda: a != c, "hashes_equal": lambda: hash(a) == hash(c), "set_of_both": lambda: len({a, c}),
    "accelerator_is_cuda_stream": lambda: isinstance(a, torch.cuda.Stream),
    "cuda_is_torch_stream": lambda: isinstance(c, torch.Stream),
    "cuda_stream_class_subclass": lambda: issubclass(torch.cuda.Stream, torch.Stream),
    "ids_equal": lambda: a.stream_id == c.stream_id, "default_stream_id": lambda: torch.cuda.default_stream().stream_id,
    "accelerator_device": lambda: [str(a.device), a.device_index, a.device_type],
    "cuda_device": lambda: [str(c.device), c.device_index, c.device_type],
    "accelerator_repr": lambda: re.sub(r"0x[0-9a-f]+|\d{2,}", "N", repr(a)),
    "cuda_repr": lambda: re.sub(r"0x[0-9a-f]+|\d{2,}", "N", repr(c)),
    "generic_repr": lambda: re.sub(r"0x[0-9a-f]+|\d{2,}", "N", repr(g)),
    "side_id_nonzero": lambda: side.stream_id != 0, "side_id_is_handle": lambda: side.stream_id == side.cuda_stream,
    "generic_type": lambda: name(g), "generic_positional_type": lambda: name(torch.Stream("cuda")),
    "generic_bare_type": lambda: name(torch.Stream()), "generic_device_object": lambda: name(torch.Stream(torch.device("cuda", 0))),
    "generic_index_device": lambda: name(torch.Stream(0)),
    "generic_priority": lambda: [torch.Stream(device="cuda", priority=-1).priority, g.priority],
    "generic_has_cuda_stream": lambda: hasattr(g, "cuda_stream"),
    "generic_native_handle": lambda: [hasattr(g, "native_handle"), getattr(g, "native_handle", 0) != 0],
    "generic_id_nonzero": lambda: g.stream_id != 0, "generic_eq_itself": lambda: g == g,
    "generic_eq_int": lambda: g == 1,
    "generic_public_names": lambda: public(g), "cuda_public_names": lambda: public(side),
    "generic_query": lambda: g.query(), "generic_synchronize": lambda: g.synchronize(),
    "generic_record_event_type": lambda: name(g.record_event()),
    "generic_wait_stream_cuda": lambda: g.wait_stream(c), "cuda_wait_stream_generic": lambda: c.wait_stream(g),
    "generic_wait_event_cuda_event": lambda: g.wait_event(torch.cuda.Event()),
    "cuda_wait_event_generic_event": lambda: c.wait_event(torch.Event(device="cuda")),
    "generic_is_capturing": lambda: g.is_capturing() if hasattr(g, "is_capturing") else "absent",
    "cuda_stream_context_generic": lambda: in_stream_context(g, torch.cuda.stream),
    "with_generic": lambda: in_stream_context(g, lambda s: s),
    "cuda_set_stream_generic": lambda: restored(lambda: (torch.cuda.set_stream(g), name(torch.cuda.current_stream()))[1]),
    "accelerator_set_stream_cuda": lambda: restored(lambda: (torch.accelerator.set_stream(side),
        torch.cuda.current_stream() == side, name(torch.accelerator.current_stream()))[1:]),
    "accelerator_set_stream_generic": lambda: restored(lambda: (torch.accelerator.set_stream(g),
        torch.cuda.current_stream().stream_id == g.stream_id)[1]),
    "accelerator_current_in_cuda_context": lambda: in_stream_context(side, torch.cuda.stream),
    "generic_from_ids_eq_cuda": lambda: torch.Stream(stream_id=side.stream_id, device_index=0, device_type=1) == side,
    "cuda_eq_generic_from_ids": lambda: side == torch.Stream(stream_id=side.stream_id, device_index=0, device_type=1),
    "generic_from_ids_eq_generic": lambda: torch.Stream(stream_id=g.stream_id, device_index=0, device_type=1) == g,
    "cuda_from_ids_eq_cuda": lambda: torch.cuda.Stream(stream_id=side.stream_id, device_index=0, device_type=1) == side,
    "record_stream_generic": lambda: torch.ones(4, device="cuda").record_stream(g),
    "graph_capture_on_generic": lambda: capture_on(torch.Stream(device="cuda")),
    "event_generic_type": lambda: name(torch.Event(device="cuda")),
    "event_bare_type": lambda: name(torch.Event()),
    "event_cuda_is_torch_event": lambda: isinstance(torch.cuda.Event(), torch.Event),
    "event_generic_is_cuda_event": lambda: isinstance(torch.Event(device="cuda"), torch.cuda.Event),
    "event_generic_timed": timed_pair,
    "event_generic_public_names": lambda: public(torch.Event(device="cuda")),
    "event_generic_repr": lambda: re.sub(r"0x[0-9a-f]+|\d{2,}", "N", repr(torch.Event(device="cuda"))),
    "event_generic_record_on_cuda": lambda: torch.Event(device="cuda").record(side),
    "event_cuda_record_on_generic": lambda: torch.cuda.Event().record(g),
}
for case, call in cases.items():
    try:
        out = {"case": case, "ok": True, "value": call()}
        json.dumps(out)
    except Exception as e:
        out = {"case": case, "ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    print(json.dumps(out), flush=True)
