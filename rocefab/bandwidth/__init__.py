"""`rocefab bandwidth check`: read perftest and nccl-tests output (parse), hold it against the plan's
bandwidth-tests/expected.json (judge), and say what passed (report). Each step is its own module."""
