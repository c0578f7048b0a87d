"""Which machinery ran: the decode step is captured once through the seam and replayed every step."""

from seam import get_graph_break_stats, get_step_input_stats

from toyengine.decode import DecodeStep


def test_the_first_step_captures_one_segment_and_every_step_replays_it(backend):
    step = DecodeStep(backend)
    for tokens in ([1, 2], [3, 4], [5, 6]):
        step.step(tokens)
    stats = get_graph_break_stats()
    assert (stats.segments_captured, stats.replays) == (1, 3)


def test_token_ids_reach_the_graph_through_one_persistent_step_input(backend):
    step = DecodeStep(backend)
    for tokens in ([1, 2], [3, 4], [5, 6]):
        step.step(tokens)
    stats = get_step_input_stats()
    assert (stats.binds, stats.host_refreshes) == (1, 3)
