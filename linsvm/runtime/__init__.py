"""How linsvm runs: threads and their number, Ctrl-C in worker threads, memory
checks, and MPI (the launch and the collectives).  docs/design.md places it."""
