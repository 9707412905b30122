# A third-party module with an optional dependency, optional_extra, that is
# installed nowhere: a module of that name put later in the strategy's
# folder, or in a folder of sys.path, is what a cold start would import.
try:
    import optional_extra  # noqa: F401
except ImportError:
    optional_extra = None
