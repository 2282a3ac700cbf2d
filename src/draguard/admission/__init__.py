"""Admission: the AdmissionReview webhook that enforces the catalog in the cluster.

Exempt by default: kube-system and the webhook's (or the policies' parameters') own
namespace, which exist once draguard is installed, so that no one creates them later as
exempt. GPU infrastructure that must run unjudged is an explicit choice at install
(`--exempt-namespace`, the chart's `exemptNamespaces`): the NVIDIA GPU Operator's
`gpu-operator`, whose validator pods ask for nvidia.com/gpu, set NVIDIA_VISIBLE_DEVICES=all
and run privileged by design (judged, they are refused and the operator never becomes ready).
The risk of naming one: whoever can create or write in that namespace is exempt, so name only
namespaces that exist and that tenants cannot create."""
