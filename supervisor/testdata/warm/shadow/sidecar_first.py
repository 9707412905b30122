import countlib  # noqa: F401
import sidecar  # noqa: F401  (this folder's: never imported by the template)


def on_data(ctx, history):
    pass
