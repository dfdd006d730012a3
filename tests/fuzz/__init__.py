"""Differential fuzzing: random graphs compiled for both backends, with and without rewrites."""
