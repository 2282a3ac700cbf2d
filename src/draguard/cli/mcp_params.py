"""What each parameter of the MCP tools means, for the JSON schema the client's model reads.

A model choosing arguments sees only the tool's description and its input schema: a bare
`kube_version: string` says nothing of the accepted forms or of what is read where. These
descriptions become each property's `description` (cli.mcp registers every tool with them,
and refuses to register a parameter that has none). Plain strings, so that importing this
module costs nothing where the MCP server is not started."""

from __future__ import annotations

from ..core.versions import DEFAULT_KUBE_VERSION, SUPPORTED_KUBE_VERSIONS

_RELEASE = (f"the cluster's Kubernetes release, {SUPPORTED_KUBE_VERSIONS[0]} to {SUPPORTED_KUBE_VERSIONS[-1]} "
            f"(e.g. '1.34'); empty: the project's .draguard.yaml, else {DEFAULT_KUBE_VERSION}")
_GATES = ("feature gates the cluster sets differently from its release's defaults, 'Gate=true,Other=false'; "
          "empty: the defaults")
_PATHS = "files, folders, Helm charts or Kustomize folders, each inside the workspace"
_INVENTORY = "the cluster's devices as YAML text: ResourceSlices, Nodes, DeviceClasses, claims already allocated"

#: parameter -> its description, where one name means the same in every tool
SHARED = {
    "kube_version": _RELEASE,
    "feature_gates": _GATES,
    "paths": _PATHS + " (give these or `manifest`)",
    "manifest": "Kubernetes manifests as YAML or JSON text, several documents allowed (give this or `paths`)",
    "inventory": _INVENTORY,
}

#: (tool, parameter) -> its description, where it is the tool's own
OWN = {
    ("lint", "reference"): _PATHS + ", read only for what rules read across files (the template a pod names): "
                                    "not judged",
    ("explain", "rule_id"): "a rule's id, as the rules tool lists them (e.g. 'legacy-gpu-resource')",
    ("allocate", "claims"): "ResourceClaims and ResourceClaimTemplates as YAML text, allocated in order",
    ("simulate", "manifests"): "the Deployment and the ResourceClaimTemplates it uses, as YAML text",
    ("simulate", "deployment"): "which Deployment to roll out, by name, when the text has several; empty: the only one",
    ("simulate", "horizon"): "how many simulated seconds to run before giving up, above 0 (default 3600)",
    ("fix", "unsafe"): "also apply fixes that change behaviour (the migration of device-plugin GPUs to DRA is one)",
    ("fix", "write"): "write the fixed files in place (only for `paths`); otherwise only the diff is returned",
    ("audit", "dump"): "a file of `kubectl get ... -o yaml|json` output or a folder from `draguard audit --save-dump`, "
                       "inside the workspace",
    ("audit", "snapshot"): "the text of such a dump, instead of `dump`",
    ("audit", "kubeconfig"): "a kubeconfig file inside the workspace whose users run no exec or auth-provider "
                             "plugin; empty (and no dump): the server's own cluster, read-only",
    ("audit", "context"): "the kubeconfig context; empty: its current one",
    ("audit", "at"): "judge ages as of this RFC 3339 time; empty: the dump's capture time, else now",
    ("audit", "kube_version"): "judge as this release instead of the cluster's own; empty: the cluster's",
}


def description(tool: str, parameter: str) -> str:
    """The description of one tool's parameter; KeyError where none is written."""
    return OWN.get((tool, parameter)) or SHARED[parameter]
