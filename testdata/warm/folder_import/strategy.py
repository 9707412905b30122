"""A warm run that took another branch than its --ci run (issue: the
template imported thirdlib, which imports this folder's stratcfg, with the
folder off sys.path, and every run inherited its fallback). Needs
testdata/warm/site on PYTHONPATH. Buys helper.LOT times k at the fifth
bar, sells at the twentieth."""
try:
    import thirdlib  # noqa: F401
except ImportError:
    thirdlib = None
import helper

MANIFEST = {"name": "warm-folder-import", "params": {"k": 1}}
bars = 0
bought = None


def on_data(ctx, history):
    global bars, bought
    bars += 1
    if bars == 5:
        print("lot", helper.LOT, flush=True)
        bought = ctx.symbol
        ctx.buy(ctx.symbol, helper.LOT * ctx.params["k"])
    elif bars == 20:
        ctx.sell(bought, ctx.position(bought))
