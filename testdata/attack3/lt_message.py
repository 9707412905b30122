"""Fails every run of a sweep at its first bar with an exception whose
message is 600 '<' characters: a sweep report carries each failed run's
message (cut at 500 bytes), and JSON escapes '<' as \\u003c, six bytes each
(attack3_test.go: the projected size of a 10,000-run sweep's report)."""

MANIFEST = {"params": {"n": 0}}


def on_data(ctx, history):
    raise RuntimeError("<" * 600)
