"""A third-party module that reads the interpreter's command line at import:
a cold start's is the bridge's, `--fds R,A,S,C STRATEGY` after its path."""
import sys

TEMPLATE_IN_ARGV = "--template" in getattr(sys, "orig_argv", sys.argv)
