"""Fails with an exception whose message is 5 MiB long: the report keeps the
exception (its message cut), not a protocol failure."""


def on_data(ctx, history):
    raise ValueError("x" * (5 << 20))
