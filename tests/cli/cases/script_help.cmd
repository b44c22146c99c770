script --help
