diff --ignore-mangle --only code testdata/diff/base.pt testdata/diff/shape.pt
