"""Robustness tests: one for each way of using Sluice wrongly or hard."""
