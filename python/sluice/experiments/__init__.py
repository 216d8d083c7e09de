"""Experiments: `sluice experiment NAME`, each writing CSV, a markdown table
and a PNG into an output folder, beside the published figures where they exist."""
