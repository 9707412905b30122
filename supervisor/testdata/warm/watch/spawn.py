import spawns  # noqa: F401


def on_data(ctx, history):
    pass
