"""Input rules: problems the loader, the configuration reader and the engine report; they
have no check of their own, and are here so that docs, SARIF and `draguard rules` know them."""

from ..core.finding import Severity
from ..sources import loader
from .base import Needs, Rule
from .registry import register


class InputRule(Rule):
    needs = Needs.INPUT
    reported_by = "loader"


@register
class YamlSyntax(InputRule):
    id = loader.YAML_SYNTAX
    name = "YAML syntax error"
    category = "parse"
    severity = Severity.ERROR
    summary = "The input is not valid YAML or JSON, or not UTF-8 text."
    rationale = """
        kubectl and the API server reject the whole file, so nothing in it reaches the cluster.
        draguard reports the first error libyaml meets (parsing cannot resume after it) and
        still checks the documents before it."""
    reference = "https://yaml.org/spec/1.2.2/"
    noncompliant = "metadata:\n  name: [unclosed\n"


@register
class DuplicateKey(InputRule):
    id = loader.DUPLICATE_KEY
    name = "Duplicate mapping key"
    category = "parse"
    severity = Severity.ERROR
    summary = "A mapping defines the same key twice."
    rationale = """
        Plain YAML keeps the last value silently, but kubectl's strict decoding rejects the
        object ("mapping key already defined"), and a reviewer reading the first value is misled."""
    reference = "https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation"
    noncompliant = "metadata:\n  name: a\n  name: b\n"


@register
class InputLimit(InputRule):
    id = loader.INPUT_LIMIT
    name = "Input refused by a safety limit"
    category = "parse"
    severity = Severity.ERROR
    summary = "A file or document is too large, too deep, or expands too far through aliases."
    rationale = """
        Limits: 32 MiB per file, 8 MiB per document, 100 levels of nesting, 1,000,000 nodes
        per document with aliases counted every time they are used (so a 'billion laughs'
        alias bomb is refused after a bounded amount of work). The API server has similar
        limits (3 MiB request bodies by default); nothing legitimate comes close."""
    reference = "https://en.wikipedia.org/wiki/Billion_laughs_attack"


@register
class TemplateUnrendered(InputRule):
    id = loader.TEMPLATE_UNRENDERED
    name = "Unrendered template"
    category = "parse"
    severity = Severity.WARNING
    summary = "The file holds `{{ }}` template markup and is not a manifest until rendered."
    rationale = """
        Helm and Go templates only become Kubernetes objects once rendered; linting the raw
        text would report noise and miss what the template produces. Point draguard at the
        chart folder (it runs `helm template`), or render first and lint the output."""
    reference = "https://helm.sh/docs/helm/helm_template/"


@register
class RenderSkipped(InputRule):
    id = loader.RENDER_SKIPPED
    name = "Renderer not available"
    category = "parse"
    severity = Severity.WARNING
    summary = "A Helm chart or Kustomize folder was skipped because its renderer is not on PATH."
    rationale = """
        draguard renders charts with `helm template` and kustomizations with `kustomize build`
        or `kubectl kustomize`, using the binaries the user already has. Without them the
        folder is skipped (and said so) while everything else is still checked."""
    reference = "https://kubectl.docs.kubernetes.io/references/kustomize/"


@register
class InputSkipped(InputRule):
    id = loader.INPUT_SKIPPED
    name = "Input not read"
    category = "parse"
    severity = Severity.WARNING
    summary = ("A folder walk met something it does not read: a pipe, socket or device named like a manifest, or "
               "a link to a folder outside the walked one.")
    rationale = """
        Reading a named pipe waits for a writer that may never come, and a link to a folder
        may lead anywhere (a home folder, the whole disk, or back up the tree), so neither is
        read; each is said, so that nothing is skipped silently. A link into the walked folder
        is checked under its own path. Give a link's target as an input to check it."""
    reference = "https://man7.org/linux/man-pages/man7/fifo.7.html"


@register
class JudgedInBuild(InputRule):
    id = loader.JUDGED_IN_BUILD
    name = "Part of a chart or kustomization judged in its render"
    category = "parse"
    severity = Severity.INFO
    summary = ("A file named as an input (or met in a folder walk) is part of a Helm chart (a template, a values "
               "file) or a kustomization's patch or kustomization file: the chart's render or the kustomization's "
               "build is judged instead; a kustomize Component is judged in the overlays that include it; a patch "
               "a kustomization names only in a commented-out line is disabled, not checked in a walk.")
    rationale = """
        pre-commit passes changed files one by one. A chart's template is no manifest until
        rendered (alone it drew only `template-unrendered`), and a strategic-merge or JSON
        patch holds only the fields it changes: judged alone, a Deployment patch lacks its
        selector and containers (schema errors that are not there), and a fix would write
        whole objects into it (a ResourceClaimTemplate added to a patch file makes
        `kustomize build` fail: no resource matches it). So a file inside a chart stands for
        the nearest chart it lies in, rendered, and a patch for the build of the nearest
        kustomization at or above its folder that names it; findings point into the
        templates and patches that wrote them, and `fix` reports them without writing. A
        kustomize Component, which `kustomize build` refuses alone, is said and not built:
        its patches are judged in the overlays that name it under `components`. Scaffolds
        ship patches disabled, named only in a comment under `patches` (kubebuilder's
        `#- path: patches/cainjection_in_....yaml`, KServe's `#ENABLE_KSERVE - path: ...`):
        a folder walk says such a file and leaves it, as the build does; named as an input,
        it is checked as a file. A commented-out entry of `resources` is a whole object, an
        alternative applied by hand, and is linted as a file."""
    reference = "https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/"


@register
class ChartDependencyMissing(InputRule):
    id = loader.CHART_DEPENDENCY_MISSING
    name = "Disabled chart dependency missing from charts/"
    category = "parse"
    severity = Severity.INFO
    summary = ("A dependency in Chart.yaml is not in the chart's charts/ folder and the values disable it: the chart "
               "was rendered without it, as helm renders a disabled dependency.")
    rationale = """
        `helm template` refuses a chart whose charts/ folder lacks any dependency of
        Chart.yaml, enabled or not (helm's CheckDependencies), and charts kept in git often
        lack them: charts/ is filled by `helm dependency build` in the release pipeline, and
        the missing ones are optional subcharts (monitoring, a cache) the default values
        turn off. A dependency the values disable (its condition, or its tags, as helm reads
        them) renders nothing, so draguard renders the chart without it and says so here,
        on the dependency's entry. A missing dependency the values enable is still a
        `render-failed` error: run `helm dependency build` first."""
    reference = "https://helm.sh/docs/helm/helm_dependency/"


@register
class RenderFailed(InputRule):
    id = loader.RENDER_FAILED
    name = "Rendering failed"
    category = "parse"
    severity = Severity.ERROR
    summary = "`helm template` or `kustomize build` exited with an error."
    rationale = """
        A chart or kustomization that does not render cannot be deployed either; the
        renderer's own last error line is reported."""
    reference = "https://helm.sh/docs/helm/helm_template/"


@register
class NotAnObject(InputRule):
    id = loader.NOT_AN_OBJECT
    name = "Not a Kubernetes object"
    category = "schema"
    severity = Severity.INFO
    summary = "A document has no apiVersion and kind, so it is not checked."
    rationale = """
        Configuration files that share a folder with manifests (device-plugin sharing configs,
        values files) are skipped; this note says so, so that nothing is skipped silently."""
    reference = "https://kubernetes.io/docs/concepts/overview/working-with-objects/"


@register
class MiscasedTypeKey(InputRule):
    id = loader.MISCASED_TYPE_KEY
    name = "apiVersion or kind spelled with the wrong case"
    category = "schema"
    severity = Severity.ERROR
    summary = "A document spells apiVersion or kind with the wrong case (`apiversion`, `Kind`), so it has no type."
    rationale = """
        JSON and YAML keys are case-sensitive: a document with `apiversion:` has no
        apiVersion, kubectl refuses it ("apiVersion not set") and nothing in it is deployed.
        Unlike a values file (`not-an-object`), such a document was meant to be an object,
        so this is an error at the miscased key."""
    reference = "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
    noncompliant = "apiversion: v1\nkind: Pod\nmetadata: {name: p}\n"


@register
class LiveObjects(InputRule):
    id = "live-objects"
    name = "Live objects: rules for authored manifests skipped"
    category = "schema"
    severity = Severity.INFO
    reported_by = "engine"
    summary = "Some objects were read back from a cluster; rules about how a manifest is written were not run on them."
    rationale = """
        `kubectl get -o yaml` returns objects as the API server stores them: every default
        filled in, in the apiVersion the client asked for, with status and managedFields.
        Rules that judge the authored text (spelling out allocationMode, choosing a served
        apiVersion) would report the server's choices, so they are skipped on objects with a
        `metadata.uid`, and this note names them. Every other rule runs; managedFields are
        ignored, and a Pod's `status.resourceClaimStatuses` resolves its generated claims."""
    reference = "https://kubernetes.io/docs/reference/kubectl/generated/kubectl_get/"


@register
class RulesSkipped(InputRule):
    id = "rules-skipped"
    name = "Rules skipped an object: a value they need is unreadable"
    category = "schema"
    severity = Severity.INFO
    reported_by = "engine"
    summary = ("A value a rule needs cannot be read (NaN, an infinity, a number past int64, a map where a selector or "
               "number belongs); the rules that need it skipped the object, and this note names them.")
    rationale = """
        The API server refuses such an object (`schema-invalid` says where), so there is no
        answer to what a rule would say of it: judged as if the value were absent, a budget
        whose selector is `7` would "select nothing", a GPU count of `.nan` would be none.
        Each rule that needs the value skips that object only (its findings for it are left
        out) and every other rule still runs; this note, at the value's own place, names the
        rules and the object they skipped, so that nothing is left out silently. A value in
        another object (a budget read while judging a Deployment) is blamed on that object."""
    reference = "https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation"


@register
class UnknownRule(InputRule):
    id = "unknown-rule"
    reported_by = "engine"
    name = "Unknown rule id"
    category = "schema"
    severity = Severity.ERROR
    summary = "A suppression annotation or the config names a rule draguard does not have."
    rationale = """
        A misspelt id would silently suppress nothing (or configure nothing); `draguard rules`
        lists the valid ids."""
    reference = "https://github.com/draguard/draguard#suppressions-and-config"
    noncompliant = """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
          annotations:
            ignore.draguard.io/no-such-rule: "reason"
        """


@register
class InternalError(InputRule):
    id = "internal-error"
    name = "A rule failed"
    category = "internal"
    severity = Severity.ERROR
    reported_by = "engine"
    summary = "A rule raised an exception on an object: a draguard bug. The run exits 2; every other rule still ran."
    rationale = """
        Each rule runs on each object in isolation: when one fails, draguard reports which
        rule on which object (and why), skips only that pair, and exits with status 2 so
        that a crash never passes for a clean result. Please report it with the object."""
    reference = "https://github.com/draguard/draguard/issues"
