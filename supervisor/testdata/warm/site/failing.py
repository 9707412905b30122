# Imports a module, then fails: what it imported stays, as it would in a
# cold start's one attempt.
import countlib  # noqa: F401

raise ImportError("failing: cannot be imported")
