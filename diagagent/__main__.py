"""`python -m diagagent`: the same as the `diagagent` console script."""

from diagagent.apps.cli import main

main()
