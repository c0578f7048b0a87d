"""Which operations take a host tensor beside device tensors, and in which words the others refuse it.

Plain torch on a GPU machine (``python3 scripts/mixed_devices_probe.py``), or on the emulated device here
(``--emulated``); one JSON line per case. Its H100 answers (session 22) are in
``evidence/h100-device-calls-2026-12-05-session22.txt``; ``seam/torch_cuda/dispatch.py`` follows them.
"""
import json, sys
import torch
if "--emulated" in sys.argv:
    from seam.torch_cuda import emulate_cuda
    emulate_cuda().__enter__()
F = torch.nn.functional
d = "cuda"
x = torch.randn(4, 3, device=d)
cases = {
    "ctc_loss_host_length_tensors": lambda: F.ctc_loss(torch.randn(5, 2, 4, device=d).log_softmax(2),
        torch.tensor([[1, 2], [1, 1]], device=d), torch.tensor([5, 5]), torch.tensor([2, 2])),
    "ctc_loss_host_targets": lambda: F.ctc_loss(torch.randn(5, 2, 4, device=d).log_softmax(2),
        torch.tensor([[1, 2], [1, 1]]), torch.tensor([5, 5]), torch.tensor([2, 2])),
    "index_host_long": lambda: x[torch.tensor([0, 2])],
    "index_host_bool": lambda: x[torch.tensor([True, False, True, False])],
    "index_put_host_index": lambda: x.index_put_((torch.tensor([0, 1]),), torch.zeros(2, 3, device=d)),
    "setitem_host_index": lambda: x.__setitem__(torch.tensor([0, 1]), 1.0),
    "index_select_host": lambda: x.index_select(0, torch.tensor([0, 1])),
    "gather_host": lambda: x.gather(0, torch.zeros(2, 3, dtype=torch.long)),
    "embedding_host_ids": lambda: F.embedding(torch.tensor([0, 1]), x),
    "add_host_0dim": lambda: x + torch.tensor(2.0),
    "add_host_1dim": lambda: x + torch.ones(3),
    "where_host_0dim": lambda: torch.where(x > 0, x, torch.tensor(0.0)),
    "masked_fill_host_0dim_value": lambda: x.masked_fill(x > 0, torch.tensor(1.0)),
    "pack_padded_host_lengths": lambda: torch.nn.utils.rnn.pack_padded_sequence(torch.randn(3, 2, 4, device=d),
        torch.tensor([3, 2]), enforce_sorted=True).data.shape,
    "pack_padded_device_lengths": lambda: torch.nn.utils.rnn.pack_padded_sequence(torch.randn(3, 2, 4, device=d),
        torch.tensor([3, 2], device=d)),
    "repeat_interleave_host_repeats": lambda: x.repeat_interleave(torch.tensor([1, 2, 1, 1]), dim=0),
    "copy_host_into_device": lambda: x.copy_(torch.ones(4, 3)),
    "searchsorted_host_values": lambda: torch.searchsorted(torch.arange(4.0, device=d), torch.tensor([1.5])),
    "mm_host": lambda: x @ torch.ones(3, 2),
    "cat_mixed": lambda: torch.cat([x, torch.ones(1, 3)]),
    "scatter_host_src": lambda: torch.zeros(4, 3, device=d).scatter_(0, torch.zeros(1, 3, dtype=torch.long, device=d), torch.ones(1, 3)),
    "lerp_host_0dim_weight": lambda: torch.lerp(x, x, torch.tensor(0.5)),
    "clamp_host_0dim": lambda: torch.clamp(x, min=torch.tensor(0.0)),
    "addcmul_host_0dim": lambda: torch.addcmul(x, x, torch.tensor(2.0)),
}
for name, call in cases.items():
    try:
        r = call()
        torch.cuda.synchronize()
        out = {"case": name, "ok": True}
    except Exception as e:
        out = {"case": name, "ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    print(json.dumps(out), flush=True)
