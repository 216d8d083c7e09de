"""The lab: Sluice's experiments (`sluice experiment NAME`, each writing
CSV, a markdown table and a PNG into an output folder, beside the published
figures in `published/` where they exist), their lab settings and the
training of the learned poll policy. The product (`sluice` outside `lab`
and the CLI) never imports it."""
