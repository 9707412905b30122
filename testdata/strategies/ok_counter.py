"""Passes: counts bars, prints a little, returns metadata."""
MANIFEST = {"name": "counter", "params": {"every": 100}}
count = 0


def on_data(ctx, history):
    global count
    count += 1
    if count % ctx.params["every"] == 0:
        print(f"bar {count} {ctx.symbol} close={ctx.bar.close}")


def on_finish(ctx):
    return {"bars": count}
