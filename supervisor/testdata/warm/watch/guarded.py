import usesfolder  # noqa: F401


def on_data(ctx, history):
    pass
