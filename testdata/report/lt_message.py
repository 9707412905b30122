"""Fails every run of a sweep at its first bar with an exception whose
message is 600 '<' characters: a sweep report carries each failed run's
message (the first 10 of 500 characters, the others of 120), and JSON
escapes '<' as \\u003c, six bytes each (report_attacks_test.go)."""

MANIFEST = {"params": {"n": 0}}


def on_data(ctx, history):
    raise RuntimeError("<" * 600)
