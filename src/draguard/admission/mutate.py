"""The mutating path: the object with the catalog's *safe* fixes applied (the same fixes `draguard
fix` applies without `--unsafe-fixes`), returned as an RFC 6902 JSON Patch computed by the
`jsonpatch` library from the object before and after. Unsafe and display-only fixes never
mutate at admission; a fix whose edits no longer apply after an earlier one is left out. An
UPDATE is fixed only where it brings the fault (admission.judge ratchets the same way): an
object admitted before keeps its shape, and a pod, whose spec an update may not change, can
still have its labels and finalizers changed."""

from __future__ import annotations

from ..core.fixes import Applicability, EditError, apply_edits, plain
from .judge import WORKLOAD_CONTROLLERS, brought, findings_on, not_judged
from .review import Request


def safe_patch(request: Request, config, context=(), devices=None,
               controllers: frozenset = WORKLOAD_CONTROLLERS) -> tuple[list, list[str]]:
    """(JSON Patch operations, the titles of the fixes applied), both empty when nothing
    applies."""
    import jsonpatch

    obj = request.object
    if not_judged(request, controllers) or obj is None:  # not_judged skips a request without an object
        return [], []
    original = plain(obj)
    fixed, applied = original, []
    fixable, _ = brought(request, [f for f in findings_on(obj, config, context, devices)
                                   if f.fix is not None and f.fix.applicability is Applicability.SAFE],
                         config, context, devices)
    for finding in fixable:
        fix = finding.fix
        try:
            documents = apply_edits(fixed, fix.edits)
        except EditError:
            continue
        if len(documents) > 1:  # a fix that adds an object cannot be a patch of this one
            continue
        fixed = documents[0]
        applied.append(f"[{finding.rule}] {fix.title}")
    return jsonpatch.make_patch(original, fixed).patch, applied
