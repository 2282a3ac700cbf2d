"""draguard's vocabulary: findings, locations, fixes, errors, versions. Imports nothing else
of draguard, so every other package may use it."""
