# attack: markup and script in everything its HTML report shows (a param, its output with terminal escapes, artifact names, an "image" that is HTML, what on_finish returns): tearsheet_test.go loads the report in Chromium and checks none of it runs; here, that the run itself is an ordinary passing job in every mode
# expect: exit=0 status=passed
"""Puts markup and script into everything of its job that its HTML report
shows: a param's value, its output (with terminal escapes), the names of
its artifacts (a file named like markup, an "image" that is HTML), what
on_finish returns, and, with fail=True, its failure's message and
traceback. A report that let any of it run would set document.title to
"pwned" or window.__pwned (tearsheet_test.go checks neither happens)."""

PAYLOAD = "</script><script>document.title='pwned';window.__pwned=1</script><!--"
TAG = "\"'><img src=x onerror=\"document.title='pwned';window.__pwned=1\">"

MANIFEST = {
    "params": {"label": PAYLOAD, "fail": False, "n": 3},
}

seen = 0


def on_data(ctx, history):
    global seen
    seen += 1
    if seen == 1:
        print("stdout " + PAYLOAD + " \x1b]0;pwned\x07\x1b[31mred\x1b[0m " + TAG, flush=True)
        import sys
        print("stderr " + PAYLOAD + " " + TAG, file=sys.stderr, flush=True)
        # A name that is markup (no slash: it is a file name), and an
        # "image" whose content is a page with a script.
        with open(ctx.artifact_path(TAG + ".png"), "w") as f:
            f.write("<html><script>document.title='pwned'</script></html>")
        with open(ctx.artifact_path("note " + TAG + ".txt"), "w") as f:
            f.write(PAYLOAD)
    if seen % 20 == 1 and ctx.position(ctx.symbol) == 0:
        ctx.buy(ctx.symbol, 1)
    elif seen % 20 == 11 and ctx.position(ctx.symbol) > 0:
        ctx.sell(ctx.symbol, ctx.position(ctx.symbol))
    if ctx.params["fail"] and seen == 200:
        raise RuntimeError("failed on purpose: " + PAYLOAD + " " + TAG + " \x1b[2J")


def on_finish(ctx):
    return {"label": PAYLOAD, "tag": TAG}
