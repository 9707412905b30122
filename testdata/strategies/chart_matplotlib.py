"""Plots the close prices it saw into the artifact equity.png with
matplotlib, calling plt.show() first (which must return at once: the
worker is headless). on_finish returns the backend, the configuration
folder and the path written."""
import matplotlib
import matplotlib.pyplot as plt

closes = []


def on_data(ctx, history):
    if ctx.symbol == "SYNA":
        closes.append(ctx.bar.close)


def on_finish(ctx):
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot(closes)
    ax.set_title("SYNA close")
    plt.show()
    print("show returned", flush=True)
    path = ctx.artifact_path("equity.png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return {"backend": matplotlib.get_backend(), "configdir": matplotlib.get_configdir(), "png": path}
