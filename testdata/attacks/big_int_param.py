# attack: a MANIFEST param default Go cannot hold (an int beyond 64 bits)
# sandbox: both
# expect: exit=1 status=failed failure.kind=exception failure.hook=startup
MANIFEST = {"params": {"huge": 10**30}}


def on_data(ctx, history):
    pass
