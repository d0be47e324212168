"""What tests and benchmarks play games with: zork1 scenarios as data, trajectories built on any story file (optimal,
noisy and stuck), episodes played on the LLM path against a scripted server, generated TextWorld games, recorded real
play and the helpers they share. Nothing here writes a results file: the benchmarks (`benchmarks/`) do, and import this
package; this package never imports them."""
