"""The episode viewer: a page to watch a running episode and review finished ones (served, or as report.html)."""
