"""Asks for history.df with an interpreter that has no pandas: the error names
pandas and the interpreter."""


def on_data(ctx, history):
    if len(history) == 3:
        history.df
