validate --no-infer testdata/hooks/unchecked_view.pt
