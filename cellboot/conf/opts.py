"""Entry point for ``oslo-config-generator`` (``oslo.config.opts``)."""

from cellboot import conf as cellboot_conf


def list_opts():
    """Return ``[(group, [opts])]`` for every group cellboot registers."""
    merged = {}
    for module in cellboot_conf.MODULES:
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return list(merged.items())
