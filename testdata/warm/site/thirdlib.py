"""A third-party module of the warm tests (this folder is on PYTHONPATH): it
uses the importing strategy's configuration module, stratcfg, when one is on
sys.path, and its default otherwise. A cold start, the strategy's folder
first on sys.path, finds the folder's; a template that imported thirdlib
with the folder off sys.path had cached the default."""
try:
    import stratcfg
except ImportError:
    stratcfg = None


def lot():
    return stratcfg.LOT if stratcfg is not None else 1
