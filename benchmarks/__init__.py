"""The benchmarks: each module measures the product and writes what it found under `docs/results/` with the command
and the commit (its `main(argv)`, its report); what they play games with is `playthroughs`, which tests use too.
Their shared options: `benchmarks.cli`. One-off studies, whose figures are final: `benchmarks.studies`."""
