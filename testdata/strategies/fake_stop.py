"""Fails with protocol: writes the host's stop request into the shared page
itself, so that its yield claims a stop nobody asked for."""


def on_data(ctx, history):
    if len(history) == 3:
        ctx._state[1] = 1
