"""A captured ``nn.LSTM`` forward replays to the eager output.

On a GPU the LSTM runs cuDNN's RNN; on the emulated device torch's CPU kernel ``mkldnn_rnn_layer``
returns its workspace only while autograd is on, so a forward captured in training (grad enabled)
must replay with grad enabled too, or the kernel refuses its own recorded workspace buffer. PyTorch's
``test_graph_cudnn_dropout`` captures an LSTM this way.
"""

from __future__ import annotations

import torch


def test_an_lstm_forward_captured_with_grad_on_replays_to_the_eager_output(torch_cuda: str) -> None:
    torch.manual_seed(0)
    model = torch.nn.LSTM(8, 8, 2).cuda()
    x = torch.randn(3, 2, 8, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model(x)  # warm-up on the side stream
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out, _ = model(x)
    x.copy_(torch.randn(3, 2, 8, device="cuda"))
    g.replay()
    expected, _ = model(x)
    torch.testing.assert_close(out, expected.detach(), rtol=1e-4, atol=1e-5)
