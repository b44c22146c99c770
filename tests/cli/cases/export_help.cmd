export --help
