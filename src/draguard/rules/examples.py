"""Compliant examples shared by several rules' documentation (and their tests): a complete,
clean DRA workload targeting Kubernetes 1.34+. Rules derive their failing examples from these
by small textual edits, so each failing example differs from a clean one in one place."""


def replace_last(text: str, old: str, new: str) -> str:
    head, found, tail = text.rpartition(old)
    if not found:
        raise ValueError(f"{old!r} not in example")
    return head + new + tail

CLAIM_TEMPLATE = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: mig-1g}
    spec:
      spec:
        devices:
          requests:
          - name: gpu
            exactly:
              deviceClassName: mig.nvidia.com
              allocationMode: ExactCount
              count: 1
              selectors:
              - cel:
                  expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
    """

CLAIM_TEMPLATE_V1BETA1 = """
    apiVersion: resource.k8s.io/v1beta1
    kind: ResourceClaimTemplate
    metadata: {name: mig-1g}
    spec:
      spec:
        devices:
          requests:
          - name: gpu
            deviceClassName: mig.nvidia.com
            allocationMode: ExactCount
            count: 1
            selectors:
            - cel:
                expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
    """

POD = """---
    apiVersion: v1
    kind: Pod
    metadata: {name: inference}
    spec:
      terminationGracePeriodSeconds: 60
      resourceClaims:
      - {name: gpu, resourceClaimTemplateName: mig-1g}
      containers:
      - name: server
        image: vllm/vllm-openai
        resources:
          claims: [{name: gpu}]
        lifecycle:
          preStop:
            exec: {command: [sh, -c, sleep 10]}
    """

COMPLIANT_POD = CLAIM_TEMPLATE + POD
V1BETA1_POD = CLAIM_TEMPLATE_V1BETA1 + POD

COMPLIANT_DEPLOYMENT = CLAIM_TEMPLATE + """---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: inference}
    spec:
      replicas: 2
      selector: {matchLabels: {app: inference}}
      strategy:
        type: RollingUpdate
        rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
      template:
        metadata: {labels: {app: inference}}
        spec:
          terminationGracePeriodSeconds: 60
          resourceClaims:
          - {name: gpu, resourceClaimTemplateName: mig-1g}
          containers:
          - name: server
            image: vllm/vllm-openai
            resources:
              claims: [{name: gpu}]
            lifecycle:
              preStop:
                exec: {command: [sh, -c, sleep 10]}
    ---
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: inference}
    spec:
      maxUnavailable: 1
      selector: {matchLabels: {app: inference}}
    """
