"""Prints the file the interpreter runs as the bridge, __main__'s: its
bytecode where the engine compiled it for the interpreter, else its source
(engine's TestWorkersRunTheBridgeBytecode)."""
import sys

print("bridge", sys.modules["__main__"].__file__)


def on_data(ctx, history):
    pass
