# A third-party module that imports a top-level module, depmod, which the
# conflict strategy's folder shadows.
import depmod  # noqa: F401
