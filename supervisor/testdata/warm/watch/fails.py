try:
    import failing  # noqa: F401
except ImportError:
    pass


def on_data(ctx, history):
    pass
