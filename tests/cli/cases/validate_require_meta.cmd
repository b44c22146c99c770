validate --no-load --require-meta model.name,git_commit testdata/with_extra.pt
