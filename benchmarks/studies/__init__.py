"""One-off studies: the evidence behind a decision whose figures are final (a rule of the loop break, the story-file
check, the restore method, the progress signals). Each names, in its results file, the command and the commit that
made it; run one again only to re-examine that decision. The tools that are run as the code changes stay in
`benchmarks/`."""
