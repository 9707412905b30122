import readsconf  # noqa: F401


def on_data(ctx, history):
    pass
