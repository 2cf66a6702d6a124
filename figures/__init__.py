"""Plots made from result folders only; never re-runs training."""
