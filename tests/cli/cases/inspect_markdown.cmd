inspect README.md
