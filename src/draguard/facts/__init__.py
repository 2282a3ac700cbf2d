"""Data draguard ships, each figure with its source: the DeviceClasses real drivers install,
GPU models and MIG placements, driver attributes, the resource.k8s.io lifecycle, and the
official OpenAPI schemas. Loaded lazily and cached."""
