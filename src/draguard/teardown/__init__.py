"""draguard-teardown: the preStop helper that proves a pod's GPU was released.

Standard library and nvidia-ml-py only, imported from nowhere else in draguard (the lint
stack never loads in a container's preStop). `servers` is the one module the lint rules read:
the drain behaviour of each inference server, as data."""
