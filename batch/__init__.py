"""Batches: many games, seeds and configurations, in parallel processes or on a Ray cluster, resumable."""
