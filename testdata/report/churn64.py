"""Trades each of up to 64 symbols every few timestamps (on_bars): a
1,000,000-bar job over 64 symbols whose HTML report must stay under the
documented 5 MB (report_attacks_test.go)."""

MANIFEST = {"params": {}}
n = 0


def on_bars(ctx, bars):
    global n
    n += 1
    for s in bars:
        if (n + int(s[1:])) % 4 == 0:
            if ctx.position(s) == 0:
                ctx.buy(s, 1)
            else:
                ctx.sell(s, ctx.position(s))
