"""`draguard simulate`: rollouts on an inventory over time, with verdicts and certificates."""
