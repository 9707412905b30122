# Its leading import is third-party, but imports depmod, which this folder
# shadows: a cold start would give usesdep this folder's depmod.
import usesdep  # noqa: F401


def on_data(ctx, history):
    pass
