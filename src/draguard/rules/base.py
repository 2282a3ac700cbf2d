"""What a rule is. A rule is a small class: its id, metadata, documentation, options
(thresholds with defaults), what it needs, whether it can fix, its admission expression and
its check sit side by side. The docs, `draguard rules`, SARIF rule metadata and (with the
policy export) admission policies are generated from this one place."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, FixAvailability
from ..model.values import YamlMap
from ..core.value import Value

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

#: (apiGroup, kind) pairs: the objects a rule (or its admission policy) applies to
Targets = frozenset[tuple[str, str]]

DOCS_BASE_URL = "https://github.com/draguard/draguard/blob/main/docs/rules"


class Needs(enum.Enum):
    """The widest input a rule reads, which decides where it can run: an admission webhook
    has one object (and a cache of the cluster); an audit has the cluster, not files."""

    INPUT = "input"  # the raw text: reported while reading it (parse errors, limits)
    OBJECT = "object"  # the object alone
    OBJECT_SET = "object-set"  # other objects too (the claim a pod names, a PDB, a ConfigMap)
    INVENTORY = "inventory"  # devices: an inventory, or the built-in GPU inventory
    CLUSTER = "cluster"  # live cluster state: status, events, what drivers publish

    def __str__(self) -> str:
        return self.value


class Profile(enum.Enum):
    """Which selection of the catalog runs a rule by default (like ruff's rule selection):
    `recommended`, the default, holds what a platform engineer acts on; `strict` adds the
    judgements the guideline documents ask for that upstream defaults make redundant or that
    are a matter of house style. Each strict-only rule says why (`Rule.profile_reason`)."""

    RECOMMENDED = "recommended"
    STRICT = "strict"

    def __str__(self) -> str:
        return self.value


class Lifecycle(enum.Enum):
    """Where a rule is in its life, as ruff's rules are: `stable` runs as its profile says;
    `preview` runs only with `--preview` (its findings may still change); `deprecated` still
    runs and says what replaces it; `removed` never runs, and selecting it is an error that
    says why. The reason is `Rule.lifecycle_note`."""

    STABLE = "stable"
    PREVIEW = "preview"
    DEPRECATED = "deprecated"
    REMOVED = "removed"

    def __str__(self) -> str:
        return self.value


#: why a rule of the recommended profile is there: what its findings cost when ignored
RECOMMENDED_REASON = "its findings are faults a platform engineer acts on (a refused object, a device that is " \
    "never released or is shared across tenants, a rollout that stalls)"
#: the category whose rules follow Kubernetes releases: what they report is read from the
#: release data (facts/data/resource-api-lifecycle.yaml), which moves with each release
API_CURRENCY = "api-currency"


class Option(Value):
    """A rule threshold settable in `.draguard.yaml`."""

    __slots__ = ("default", "help", "choices", "check")

    def __init__(self, default: object, help: str, choices: tuple[object, ...] = (),
                 check: Callable[[Any], object] | None = None):
        self.default = default
        self.help = help
        self.choices = choices  # the only values allowed, when not empty
        # a further check of a configured value of the right type, raising ValueError (what the
        # value must be that a type cannot say: a driver version with an attribute list)
        self.check = check  # given a value of the default's type

    def coerce(self, value: object) -> object:
        """Check a configured value against the default's type (and the choices, and
        `check`); raise ValueError if wrong."""
        if self.choices and value not in self.choices:
            raise ValueError(f"expected one of {', '.join(map(repr, self.choices))}, got {value!r}")
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ValueError(f"expected {expected.__name__}, got {value!r}")
        if self.check is not None:
            self.check(value)
        return value


class Admission(Value):
    """The rule's check, at its own severity, as CEL on one object, for the admission policies
    `draguard policy export` writes. `condition` is true when one item passes; `over` names
    the items and the variable the condition reads:

    - 'containers': `c`, each container (init, inline and CRD container-like objects too);
    - 'podSpecs': `s`, each pod spec;
    - 'requests': `r`, each request's field mappings (`exactly`, a subrequest, or the
      v1beta1 request itself);
    - None: the condition reads `object` itself.

    A condition may also read the policy's variables (admission.variables): `podSpecs`,
    `containers`, `requests`, and `adminNamespaces` from the policy's parameters.
    `targets` narrows the kinds a policy matches where the check reports some kinds only as
    `info`. `through` is the last release on which the condition is the whole check, and
    `beyond` says why it is not after (what only the webhook's cache of the cluster sees)."""

    __slots__ = ("condition", "message", "over", "targets", "through", "beyond")

    def __init__(self, condition: str, message: str, over: str | None = None, targets: Targets | None = None,
                 through: str | None = None, beyond: str = ""):
        self.condition = condition
        self.message = message
        self.over = over
        self.targets = targets
        self.through = through
        self.beyond = beyond

    def kinds(self, rule_targets: Targets | None) -> Targets | None:
        return self.targets if self.targets is not None else rule_targets


class Mutation(Value):
    """The rule's fix as the JSON Patch of a MutatingAdmissionPolicy, applied to each pod spec
    its admission condition (over 'podSpecs') fails on. `patch` is CEL for one JSONPatch, or
    with `many` for a list of them, on pod spec `s` whose JSON pointer is `site.pointer`; it
    reads the rule's options as `params.data['<rule
    id>.<option>']`, which the exported ConfigMap holds. `since`: the first release whose new
    expressions may use what it needs (a list of lists is flattened: ext.Lists, 1.35).
    `applicability` is the fix's: unsafe ones are exported only when asked for."""

    __slots__ = ("patch", "applicability", "many", "since")

    def __init__(self, patch: str, applicability: Applicability, many: bool = False, since: str = "1.34"):
        self.patch = patch
        self.applicability = applicability
        self.many = many
        self.since = since  # MutatingAdmissionPolicy: v1beta1 in 1.34, v1 from 1.36


class Rule:
    """Base class. Subclasses set the metadata and override `check`."""

    id: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line
    rationale: ClassVar[str]  # a paragraph: why it matters
    reference: ClassVar[str] = ""  # upstream documentation URL
    upstream_note: ClassVar[str] = ""  # where circulating guideline documents differ from upstream
    #: (what it is, YAML) of a file the remedy needs that is not a Kubernetes object (a kustomize
    #: configuration), shown in the docs and by `draguard explain`
    remedy_file: ClassVar[tuple[str, str] | None] = None
    compliant: ClassVar[str] = ""  # YAML example that passes
    noncompliant: ClassVar[str] = ""  # YAML example that fails
    examples_target: ClassVar[str] = "1.34"  # the --kube-version both examples are written for
    #: the inventory both examples are judged against (a `draguard inventory generate` spec),
    #: for rules that run only with `--inventory`
    example_inventory: ClassVar[YamlMap | None] = None
    options: ClassVar[dict[str, Option]] = {}
    needs: ClassVar[Needs] = Needs.OBJECT
    #: who reports it, for rules without a check: 'loader', 'config' or 'engine'
    reported_by: ClassVar[str] = "check"
    #: (apiGroup, kind) pairs the check applies to; None = every object
    targets: ClassVar[Targets | None] = None
    fixable: ClassVar[FixAvailability] = FixAvailability.NEVER
    admission: ClassVar[Admission | None] = None
    mutation: ClassVar[Mutation | None] = None
    #: judges how a manifest is written (defaults spelt out, the apiVersion chosen): not run on
    #: live objects, which the API server wrote back with defaults filled in, in the version
    #: the client asked for
    authored_only: ClassVar[bool] = False
    #: concludes from what the object set lacks (no PodDisruptionBudget selects the workload):
    #: meaningless on one object without its cluster, so an offline admission webhook skips it
    set_wide: ClassVar[bool] = False
    #: cluster rules: the resources (as RBAC names them) the check needs; an audit that could
    #: not read one of them skips the rule and says so
    reads: ClassVar[tuple[str, ...]] = ()
    #: why a rule without an admission condition cannot be an admission policy, for
    #: `draguard rules` and the docs (the reasons every rule of a kind shares are in
    #: admission.forms): `lint_only` when nothing reaches admission to judge, `webhook_only`
    #: when the webhook judges it and CEL on one object cannot
    lint_only: ClassVar[str] = ""
    webhook_only: ClassVar[str] = ""
    #: why the webhook warns of this rule's errors instead of denying (its finding is about an
    #: object the cluster may not hold yet); empty: errors deny
    admission_warns: ClassVar[str] = ""
    #: the profile that runs it by default, and for a strict-only rule why it is not recommended
    profile: ClassVar[Profile] = Profile.RECOMMENDED
    profile_reason: ClassVar[str] = ""
    #: where it is in its life, and (for any but stable) why and what to use instead
    lifecycle: ClassVar[Lifecycle] = Lifecycle.STABLE
    lifecycle_note: ClassVar[str] = ""

    @classmethod
    def profile_text(cls) -> str:
        """The rule's profile and why it holds the rule, for `draguard rules` and the docs."""
        if cls.profile is Profile.STRICT:
            return f"strict (not in recommended: {' '.join(cls.profile_reason.split())})"
        return f"recommended (the default; {RECOMMENDED_REASON})"

    @classmethod
    def lifecycle_text(cls) -> str:
        """The rule's lifecycle, and why where it is not plainly stable."""
        text = str(cls.lifecycle)
        if cls.lifecycle_note:
            text += f" ({' '.join(cls.lifecycle_note.split())})"
        if cls.category == API_CURRENCY:
            text += ("; follows Kubernetes releases: what it reports comes from the release data "
                     "(facts/data/resource-api-lifecycle.yaml), updated with each release")
        return text

    @property
    def help_uri(self) -> str:
        return f"{DOCS_BASE_URL}/{self.id}.md"

    @property
    def has_check(self) -> bool:
        return self.reported_by == "check"

    def check(self, obj: "Manifest", ctx: "Context") -> Iterable[Finding]:
        return ()

    @classmethod
    def describe(cls) -> dict[str, object]:
        import textwrap  # the catalog's commands describe rules; a lint does not

        return {
            "id": cls.id,
            "name": cls.name,
            "category": cls.category,
            "severity": str(cls.severity),
            "summary": cls.summary,
            "rationale": " ".join(textwrap.dedent(cls.rationale).split()),
            "reference": cls.reference,
            "needs": str(cls.needs),
            "fixable": str(cls.fixable),
            "targets": sorted(f"{g}/{k}" if g else k for g, k in cls.targets) if cls.targets else None,
            "admission": {"over": cls.admission.over, "condition": cls.admission.condition,
                          "message": cls.admission.message} if cls.admission else None,
            "options": {k: {"default": o.default, "help": o.help} for k, o in cls.options.items()},
            "authoredOnly": cls.authored_only,
            "profile": str(cls.profile),
            "profileReason": " ".join(cls.profile_reason.split()),
            "lifecycle": str(cls.lifecycle),
            "lifecycleNote": " ".join(cls.lifecycle_note.split()),
        }
