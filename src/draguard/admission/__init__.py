"""Admission: the AdmissionReview webhook that enforces the catalog in the cluster."""

#: GPU infrastructure exempt by default besides kube-system and the webhook's own namespace:
#: the NVIDIA GPU Operator's default namespace, whose validator pods ask for nvidia.com/gpu,
#: set NVIDIA_VISIBLE_DEVICES=all and run privileged by design (its cuda and plugin
#: validation workloads); judged, they were refused and the operator never became ready.
#: Here, not in install, so that the commands' help can name them without loading admission.
INFRA_NAMESPACES = ("gpu-operator",)
